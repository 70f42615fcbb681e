"""Credit tiers of document 1, section 8."""

# Lower bound of each tier's credit range. The documented ranges leave gaps (5,000 to 10,000, ...):
# a quantity in a gap belongs to the tier below, i.e. the highest tier whose lower bound it reaches;
# below 1,000 is still T1, and anything above 50,000,000 is T9.
TIER_LOWER_BOUNDS = [
    (9, 50_000_001),
    (8, 40_000_000),
    (7, 20_000_000),
    (6, 10_000_000),
    (5, 2_000_000),
    (4, 500_000),
    (3, 75_000),
    (2, 10_000),
    (1, 0),
]


def tier_for_credits(quantity: int) -> int:
    for tier, lower in TIER_LOWER_BOUNDS:
        if quantity >= lower:
            return tier
    return 1

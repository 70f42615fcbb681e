"""The tabs of a section's pages, declared once in core (navigation.SECTIONS) and drawn by one template.

A page says which section and tab it is (SectionMixin.section / .tab); templates/base.html draws the tabs
above the page's content (templates/generic/includes/tabs.html).
"""

from django.urls import NoReverseMatch, reverse

from ..roles import EDITORS, has_role
from .navigation import SECTIONS


def section_tabs(section: str, active: str, notice: str = "") -> dict | None:
    """What the tabs template needs: [(tab, url, active)], the section's CSS class and a notice shown under
    the tabs on every page of the section (e.g. what the company lacks for it); None if unknown."""
    if section not in SECTIONS:
        return None
    css, declared = SECTIONS[section]
    tabs = []
    for tab in declared:
        try:
            tabs.append((tab, reverse(tab.url_name), tab.name == active))
        except NoReverseMatch:  # an app of the section not installed
            continue
    return {"css": css, "tabs": tabs, "notice": notice}


class SectionMixin:
    """A page of a section: `section` names its tabs, `tab` the active one. `may_edit` tells the page whether
    the user may create and send documents (core.roles.EDITORS)."""

    section = ""
    tab = ""

    def base_context(self):
        context = super().base_context()
        if self.section:
            context["section_tabs"] = section_tabs(self.section, self.get_tab(), self.section_notice())
        context["may_edit"] = has_role(self.request.user, *EDITORS)
        return context

    def get_tab(self) -> str:
        return self.tab

    def section_notice(self) -> str:
        return ""

"""Sections and their tabs, declared once per app (in AppConfig.ready()) and drawn by one template.

    register_tabs("tickets", [Tab("event", _("Event tickets"), "ticket-perforated", "tickets:eventticket_list"),
                              ...], css="tickets-tabs")

A page says which section and tab it is (SectionMixin.section / .tab); templates/base.html draws the tabs
above the page's content (templates/generic/includes/tabs.html).
"""

from dataclasses import dataclass

from django.urls import NoReverseMatch, reverse


@dataclass(frozen=True)
class Tab:
    name: str
    label: str
    icon: str
    url_name: str


@dataclass(frozen=True)
class Section:
    name: str
    tabs: tuple
    css: str = ""


_sections: dict[str, Section] = {}


def register_tabs(section: str, tabs, *, css: str = "") -> None:
    _sections[section] = Section(section, tuple(tabs), css or f"{section.replace('_', '-')}-tabs")


def section_tabs(section: str, active: str) -> dict | None:
    """What the tabs template needs: [(tab, url, active)] and the section's CSS class; None if unknown."""
    found = _sections.get(section)
    if found is None:
        return None
    tabs = []
    for tab in found.tabs:
        try:
            tabs.append((tab, reverse(tab.url_name), tab.name == active))
        except NoReverseMatch:  # an app of the section not installed
            continue
    return {"css": found.css, "tabs": tabs}


class SectionMixin:
    """A page of a section: `section` names the registered tabs, `tab` the active one."""

    section = ""
    tab = ""

    def base_context(self):
        context = super().base_context()
        if self.section:
            context["section_tabs"] = section_tabs(self.section, self.get_tab())
        return context

    def get_tab(self) -> str:
        return self.tab

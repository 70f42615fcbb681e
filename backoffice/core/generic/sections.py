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


def model_section(model) -> tuple[str, str]:
    """(section, tab) of a model's pages: those of the tab that shows its list; ("", "") when no tab does."""
    url_name = f"{model._meta.app_label}:{model._meta.model_name}_list"
    for section, (_css, tabs) in SECTIONS.items():
        for tab in tabs:
            if tab.url_name == url_name:
                return section, tab.name
    return "", ""


class SectionMixin:
    """A page of a section: `section` names its tabs, `tab` the active one; a model's pages (core.generic.views)
    are in the section and on the tab of the model's list unless they say otherwise. `may_edit` tells the page
    whether the user may create and send documents (core.roles.EDITORS)."""

    section = ""
    tab = ""

    def _model_section(self) -> tuple[str, str]:
        return model_section(self.get_model()) if hasattr(self, "get_model") else ("", "")

    def get_section(self) -> str:
        return self.section or self._model_section()[0]

    def base_context(self):
        context = super().base_context()
        if section := self.get_section():
            context["section_tabs"] = section_tabs(section, self.get_tab(), self.section_notice())
        context["may_edit"] = has_role(self.request.user, *EDITORS)
        return context

    def get_tab(self) -> str:
        if self.tab:
            return self.tab
        section, tab = self._model_section()
        return tab if section == self.get_section() else ""

    def section_notice(self) -> str:
        return ""

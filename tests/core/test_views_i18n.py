"""The Turkish catalogue is complete, not fuzzy, and compiled: Turkish is the default language."""

import ast
import gettext
import re
from pathlib import Path

from django.conf import settings
from django.utils import translation

CATALOGUE = Path(settings.BASE_DIR) / "backoffice" / "locale" / "tr" / "LC_MESSAGES"


def parse_po(path):
    """Entries of a .po file as dicts: msgctxt, msgid, msgid_plural, msgstr (list), flags, obsolete."""
    entries, entry, key = [], None, None

    def finish():
        if entry is not None and "msgid" in entry:
            entries.append(entry)

    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#~"):
            continue  # obsolete entries are not used
        if line.startswith("#,"):
            finish()
            entry, key = {"flags": {f.strip() for f in line[2:].split(",")}, "msgstr": []}, None
            continue
        if line.startswith("#"):
            continue
        if line.startswith('"'):
            value = ast.literal_eval(line)
            if key == "msgstr":
                entry["msgstr"][-1] += value
            else:
                entry[key] += value
            continue
        keyword, _, rest = line.partition(" ")
        value = ast.literal_eval(rest)
        if keyword in ("msgctxt", "msgid") and (entry is None or "msgid" in entry):
            finish()
            entry = {"flags": set(), "msgstr": []}
        if keyword.startswith("msgstr"):
            entry["msgstr"].append(value)
            key = "msgstr"
        else:
            entry[keyword] = value
            key = keyword
    finish()
    return entries


def test_every_turkish_entry_is_translated_and_not_fuzzy():
    entries = parse_po(CATALOGUE / "django.po")
    header = [e for e in entries if e["msgid"] == ""]
    messages = [e for e in entries if e["msgid"] != ""]
    assert len(messages) > 100
    assert header and "nplurals=2" in header[0]["msgstr"][0] and "fuzzy" not in header[0]["flags"]
    untranslated = [e["msgid"] for e in messages if not e["msgstr"] or not all(e["msgstr"])]
    fuzzy = [e["msgid"] for e in messages if "fuzzy" in e["flags"]]
    assert untranslated == [], f"untranslated: {untranslated}"
    assert fuzzy == [], f"fuzzy: {fuzzy}"


def test_translations_keep_every_placeholder():
    placeholder = re.compile(r"%\((\w+)\)[sd]|\{(\w+)\}")
    broken = []
    for entry in parse_po(CATALOGUE / "django.po"):
        if not entry["msgid"]:
            continue
        wanted = set(placeholder.findall(entry["msgid"] + entry.get("msgid_plural", "")))
        for msgstr in entry["msgstr"]:
            if set(placeholder.findall(msgstr)) != wanted:
                broken.append(entry["msgid"])
    assert broken == []


def test_the_compiled_catalogue_matches_the_po_file():
    with open(CATALOGUE / "django.mo", "rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    stale = []
    for entry in parse_po(CATALOGUE / "django.po"):
        if not entry["msgid"] or "fuzzy" in entry["flags"]:
            continue
        msgid = entry["msgid"] if "msgctxt" not in entry else f"{entry['msgctxt']}\x04{entry['msgid']}"
        if "msgid_plural" in entry:
            got = compiled.ngettext(msgid, entry["msgid_plural"], 1)
        else:
            got = compiled.gettext(msgid)
        if got != entry["msgstr"][0]:
            stale.append(entry["msgid"])
    assert stale == [], f"run `manage.py compilemessages -l tr --ignore=.venv`: {stale[:10]}"


def test_turkish_is_the_default_and_formats_numbers_the_turkish_way():
    from django.utils.formats import number_format

    assert settings.LANGUAGE_CODE == "tr"
    with translation.override("tr"):
        assert translation.gettext("Background work") == "Arka plan işleri"
        assert number_format(1234567, use_l10n=True, force_grouping=True) == "1.234.567"
    with translation.override("en"):
        assert translation.gettext("Background work") == "Background work"


def test_turkish_capitals_keep_the_dot_of_i():
    from backoffice.core.generic.text import capfirst

    with translation.override("tr"):
        assert capfirst("iş") == "İş" and capfirst("ılık") == "Ilık"
    with translation.override("en"):
        assert capfirst("invoice") == "Invoice"


# The same flags as the Makefile's `messages` target (plus node_modules); the copy below holds no tests anyway.
MAKEMESSAGES_IGNORE = [".venv", "tests", "staticfiles", "node_modules"]
# Not sources: the repository, the development databases, the ignored folders.
SKIP_DIRS = {".git", "var", *MAKEMESSAGES_IGNORE}


def _copy_sources(target):
    """Copy what makemessages reads (.py, .html, .txt and the catalogue) into target: it writes its .pot
    and temporary template files next to the sources, so it never runs on the real tree here."""
    import shutil

    root = Path(settings.BASE_DIR)

    def ignore(directory, names):
        directory = Path(directory)
        skipped = set()
        for name in names:
            path = directory / name
            if path.is_dir():
                if (directory == root and name in SKIP_DIRS) or name == "__pycache__":
                    skipped.add(name)
            elif path.suffix not in (".py", ".html", ".txt", ".po"):
                skipped.add(name)
        return skipped

    shutil.copytree(root, target, ignore=ignore)


def test_the_catalogue_covers_every_string_of_the_source(tmp_path, monkeypatch):
    """Extract the strings afresh (into a copy) and check each one is in the committed catalogue,
    translated and not fuzzy: a new gettext string without its Turkish fails here, not in front of a user."""
    import shutil

    import pytest
    from django.core.management import call_command
    from django.test import override_settings

    missing_tools = [tool for tool in ("xgettext", "msgmerge", "msguniq", "msgattrib") if not shutil.which(tool)]
    if missing_tools:
        pytest.skip(f"needs Debian's gettext ({', '.join(missing_tools)} missing; `make messages` installs it)")

    copy = tmp_path / "src"
    _copy_sources(copy)
    monkeypatch.chdir(copy)
    # The copy's own catalogue is the only locale path, so the merge lands there.
    with override_settings(LOCALE_PATHS=[copy / "backoffice" / "locale"]):
        call_command("makemessages", locale=["tr"], no_obsolete=True, ignore_patterns=list(MAKEMESSAGES_IGNORE),
                     verbosity=0)

    def key(entry):
        return entry.get("msgctxt"), entry["msgid"]

    committed = {key(e): e for e in parse_po(CATALOGUE / "django.po") if e["msgid"]}
    fresh = [e for e in parse_po(copy / "backoffice" / "locale" / "tr" / "LC_MESSAGES" / "django.po") if e["msgid"]]
    assert len(fresh) > 100
    missing, untranslated = [], []
    for entry in fresh:
        known = committed.get(key(entry))
        if known is None:
            missing.append(entry["msgid"])
        elif "fuzzy" in known["flags"] or not known["msgstr"] or not all(known["msgstr"]):
            untranslated.append(entry["msgid"])
        elif known.get("msgid_plural") != entry.get("msgid_plural"):
            missing.append(entry["msgid"])
    fix = ("run `.venv/bin/python manage.py makemessages -l tr --no-obsolete --ignore=.venv --ignore=tests "
           "--ignore=staticfiles --ignore=node_modules`, translate, then `compilemessages -l tr --ignore=.venv`")
    assert missing == [], f"not in the Turkish catalogue ({fix}): {missing[:20]}"
    assert untranslated == [], f"untranslated or fuzzy in the Turkish catalogue ({fix}): {untranslated[:20]}"

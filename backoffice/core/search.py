"""Search the Turkish way on a stored, indexed, folded column.

A model declares once which of its fields a search looks in:

    search_text = FoldedSearchField(sources=("name", "surname", "identifier", "code"))

and gets a column the database itself keeps: its fields joined by spaces and folded by core.text.SEARCH_FOLD
("İZMİR Işık" -> "izmir isik"). Being a generated column, it is right after every write path there is (save,
bulk_create, bulk_update, queryset.update(), raw SQL, the mirrors' upserts) with nothing to call, and filled for
the rows already there when its migration adds it. The list filters (core.generic.filters.BaseFilterSet) and
the lookups search it with `contains` on search_fold(text), the same folding done in Python.

Its index comes from FoldedSearchIndex in the app's migration: on PostgreSQL a trigram GIN index (pg_trgm),
which serves `LIKE '%text%'` at a million rows; without pg_trgm, and on SQLite, a btree on (company, column)
(prefix search, and a scan of the index instead of the table).

Changing SEARCH_FOLD changes what the column must hold: add a migration that removes and adds the field again.
"""

from django.db import DatabaseError, models, transaction
from django.db.migrations.operations.base import Operation
from django.db.models import F, Func
from django.utils.translation import gettext_lazy as _

from .text import SEARCH_FOLD, search_fold

SEPARATOR = " "


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class SearchFold(Func):
    """SQL of core.text.search_fold() over its expressions joined by spaces: translate() on PostgreSQL; replace()
    for the table's other characters and then lower() (ASCII only, SQLite without ICU) elsewhere. Both are
    immutable, as a generated column needs, and neither depends on the collation. The fields are joined flat
    (a || ' ' || b), not by nested Concat(), which SQLite's parser would not take with the replace() calls."""

    output_field = models.TextField()

    def _joined(self, compiler):
        parts, params = [], []
        for expression in self.source_expressions:
            sql, part_params = compiler.compile(expression)
            parts.append(f"COALESCE({sql}, '')")
            params.extend(part_params)
        return f" || {_literal(SEPARATOR)} || ".join(parts), params

    def as_sql(self, compiler, connection, **extra_context):
        sql, params = self._joined(compiler)
        for char, replacement in SEARCH_FOLD.items():
            if not char.isascii():
                sql = f"REPLACE({sql}, {_literal(char)}, {_literal(replacement)})"
        return f"LOWER({sql})", params

    def as_postgresql(self, compiler, connection, **extra_context):
        sql, params = self._joined(compiler)
        changed = [char for char, replacement in SEARCH_FOLD.items() if replacement]
        dropped = [char for char, replacement in SEARCH_FOLD.items() if not replacement]
        # translate() drops the characters of its second argument that have no counterpart in the third.
        targets = "".join(SEARCH_FOLD[char] for char in changed)
        return f"translate({sql}, {_literal(''.join(changed + dropped))}, {_literal(targets)})", params


def search_expression(sources):
    return SearchFold(*(F(name) for name in sources))


class FoldedSearchField(models.GeneratedField):
    """The folded text of `sources`, kept by the database (a stored generated column)."""

    def __init__(self, *, sources, **kwargs):
        self.sources = tuple(sources)
        for generated in ("expression", "output_field", "db_persist"):
            kwargs.pop(generated, None)
        kwargs.setdefault("verbose_name", _("search text"))
        super().__init__(expression=search_expression(self.sources), output_field=models.TextField(),
                         db_persist=True, **kwargs)

    def deconstruct(self):
        name, path, args, kwargs = super().deconstruct()
        for generated in ("expression", "output_field", "db_persist"):
            kwargs.pop(generated, None)
        kwargs["sources"] = self.sources
        return name, "backoffice.core.search.FoldedSearchField", args, kwargs


def folded_search_field(model):
    """The model's FoldedSearchField, or None."""
    for field in model._meta.concrete_fields:
        if isinstance(field, FoldedSearchField):
            return field
    return None


def search_filter(model, text):
    """A Q matching the rows whose folded search column contains `text` (folded alike), or None when the model
    has no such column."""
    field = folded_search_field(model)
    if field is None:
        return None
    return models.Q(**{f"{field.name}__contains": search_fold(text)})


class FoldedSearchIndex(Operation):
    """The index of a FoldedSearchField (see the module's docstring): trigram GIN on PostgreSQL when pg_trgm is
    there or can be created, else a btree on (company, column), or on the column alone for a model without a
    company."""

    reversible = True
    reduces_to_sql = False

    def __init__(self, model_name, field_name, name):
        self.model_name, self.field_name, self.name = model_name, field_name, name

    def deconstruct(self):
        return self.__class__.__name__, [], {"model_name": self.model_name, "field_name": self.field_name,
                                             "name": self.name}

    def state_forwards(self, app_label, state):
        pass  # the index is not part of the model state: the autodetector leaves it alone

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        model = to_state.apps.get_model(app_label, self.model_name)
        if not self.allow_migrate_model(schema_editor.connection.alias, model):
            return
        connection, quote = schema_editor.connection, schema_editor.quote_name
        table, column = model._meta.db_table, model._meta.get_field(self.field_name).column
        if connection.vendor == "postgresql" and _trigrams_available(schema_editor):
            schema_editor.execute(f"CREATE INDEX {quote(self.name)} ON {quote(table)} "
                                  f"USING gin ({quote(column)} gin_trgm_ops)")
            return
        columns = [quote(column)]
        if any(field.name == "company" for field in model._meta.concrete_fields):
            columns.insert(0, quote(model._meta.get_field("company").column))
        if connection.vendor == "postgresql":
            columns[-1] += " text_pattern_ops"  # LIKE 'text%' under any collation
        schema_editor.execute(f"CREATE INDEX {quote(self.name)} ON {quote(table)} ({', '.join(columns)})")

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        model = from_state.apps.get_model(app_label, self.model_name)
        if self.allow_migrate_model(schema_editor.connection.alias, model):
            schema_editor.execute(f"DROP INDEX IF EXISTS {schema_editor.quote_name(self.name)}")

    def describe(self):
        return f"Create the search index {self.name} on {self.model_name}.{self.field_name}"

    @property
    def migration_name_fragment(self):
        return f"{self.model_name.lower()}_search_index"


def _trigrams_available(schema_editor) -> bool:
    """pg_trgm is there, or this user may create it (a trusted extension since PostgreSQL 13)."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm'")
        if cursor.fetchone():
            return True
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'")
        if not cursor.fetchone():
            return False
    try:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    except DatabaseError:  # not allowed to: the btree will do
        return False
    return True

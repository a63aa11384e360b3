"""Sphinx configuration of the privtab documentation site.

Build it with ``make docs`` (``python -m sphinx -W --keep-going -b html docs
docs/_build/html``): warnings are errors, every cross-reference must resolve
(``nitpicky``) and every gallery example must run.
"""

from __future__ import annotations

import importlib
import os
import re
import tempfile
import zlib
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import privtab

DOCS = Path(__file__).resolve().parent

project = "privtab"
author = "The privtab developers"
copyright = "The privtab developers"
release = privtab.__version__
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_design",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = [
    "_build",
    "_inventories",
    "**/*.ipynb",
    "**/*.py.md5",
    "**/*.codeobj.json",
]
root_doc = "index"
default_role = "code"

# Every reference resolves, or the build fails.
nitpicky = True

# --- API reference: one generated page per public name ---------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"
autodoc_preserve_defaults = True
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
# A name written out in full is linked through a role: numpydoc leaves an alias that
# maps a name to itself as plain text.
numpydoc_xref_aliases = {
    "BudgetAccountant": "privtab.BudgetAccountant",
    "EncodedTable": "privtab.EncodedTable",
    "TableEncoder": "privtab.TableEncoder",
    "SparseHistogram": "privtab.SparseHistogram",
    "SparseCounts": "privtab.SparseCounts",
    "LedgerEntry": "privtab.LedgerEntry",
    "AuditResult": "privtab.audit.AuditResult",
    "FamilyBound": "privtab.audit.FamilyBound",
    "NeighbouringPair": "privtab.audit.NeighbouringPair",
    "DataFrame": "pandas.DataFrame",
    "Series": "pandas.Series",
    "ndarray": "numpy.ndarray",
    "numpy.ndarray": ":class:`numpy.ndarray`",
    "Generator": "numpy.random.Generator",
    "numpy.random.Generator": ":class:`numpy.random.Generator`",
    "SeedSequence": "numpy.random.SeedSequence",
    "numpy.random.SeedSequence": ":class:`numpy.random.SeedSequence`",
    "uint8": "numpy.uint8",
    "uint32": "numpy.uint32",
    "uint64": "numpy.uint64",
    "int64": "numpy.int64",
    "float64": "numpy.float64",
    "pandas.DataFrame": ":class:`pandas.DataFrame`",
    "pandas.Series": ":class:`pandas.Series`",
    "Path": "pathlib.Path",
    "pathlib.Path": ":class:`pathlib.Path`",
}
# Only the types named above are linked: the rest of a type field ("array-like of
# shape (n, d)", "int >= 1") is description.
numpydoc_xref_ignore = "all"

# --- Links into the documentation of the libraries privtab works with --------------
# Each project is read from its site, and from the copy in docs/_inventories when the
# site cannot be reached (an offline build, as in CI), so the build resolves the same
# references with or without a network. The copies of Python's, SciPy's, pandas',
# scikit-learn's and Dask's inventories come from Debian's documentation packages; NumPy
# has none, so numpy.txt lists the NumPy names these pages link to, in the format of an
# inventory's body.
INVENTORIES = DOCS / "_inventories"
_INTERSPHINX_SITES = {
    "python": "https://docs.python.org/3/",
    "numpy": "https://numpy.org/doc/stable/",
    "scipy": "https://docs.scipy.org/doc/scipy/",
    "pandas": "https://pandas.pydata.org/docs/",
    "sklearn": "https://scikit-learn.org/stable/",
    "dask": "https://docs.dask.org/en/stable/",
}


def _numpy_inventory():
    """Write numpy.txt as an inventory file Sphinx reads (a zlib-compressed body)."""
    body = (INVENTORIES / "numpy.txt").read_bytes()
    header = b"# Sphinx inventory version 2\n# Project: NumPy\n# Version: stable\n"
    header += b"# The remainder of this file is compressed using zlib.\n"
    path = Path(tempfile.gettempdir()) / f"privtab-docs-numpy-{os.getuid()}.inv"
    path.write_bytes(header + zlib.compress(body))
    return path


_offline_inventories = {
    name: INVENTORIES / f"{name}.inv" for name in _INTERSPHINX_SITES if name != "numpy"
}
_offline_inventories["numpy"] = _numpy_inventory()
intersphinx_mapping = {
    name: (url, (None, str(_offline_inventories[name])))
    for name, url in _INTERSPHINX_SITES.items()
}
intersphinx_timeout = 10

# --- Gallery: examples/ executed at build time ----------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "backreferences_dir": "gen_modules/backreferences",
    "doc_module": ("privtab",),
    "reference_url": {"privtab": None},
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "abort_on_example_error": True,
}

# --- HTML -----------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"privtab {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_context = {"default_mode": "light"}
html_show_sourcelink = False

# The math of the user guide and the docstrings (ε, Δ, ...) is rendered by MathJax.
mathjax3_config = {"tex": {"inlineMath": [["\\(", "\\)"]]}}


#: The modules whose names the API reference documents, each object at one name.
PUBLIC_MODULES = (
    "privtab",
    "privtab.audit",
    "privtab.audit.pairs",
    "privtab.engine",
    "privtab.datasets",
)


def _resolve(dotted):
    """Return the object a dotted name denotes, or None."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        try:
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            return None
        return obj
    return None


def _reference_by_public_name(app, env, node, contnode):
    """Resolve ``privtab.table.TableEncoder`` to the page of ``privtab.TableEncoder``.

    Docstrings name an object by the module that defines it; the reference documents it
    once, at the name users import. A reference resolves to that page when both names
    denote the same object.
    """
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if not target.startswith("privtab."):
        return None
    domain = env.get_domain("py")
    original = _resolve(target)
    if original is None:
        return None
    parts = target.split(".")
    context = node.get("py:class")
    if context:
        # A docstring inherited from a private base names the base's method: the
        # class being documented has the same method.
        candidate = ".".join((node.get("py:module") or "privtab", context, parts[-1]))
        if candidate in domain.objects and _resolve(candidate) is original:
            return _resolve_as(app, env, node, contnode, candidate)
    for module in PUBLIC_MODULES:
        for start in range(1, len(parts)):
            candidate = ".".join((module, *parts[start:]))
            if (
                candidate != target
                and candidate in domain.objects
                and _resolve(candidate) is original
            ):
                return _resolve_as(app, env, node, contnode, candidate)
    return None


def _resolve_as(app, env, node, contnode, target):
    node["reftarget"] = target
    return env.get_domain("py").resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], target, node, contnode
    )


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Document a class's own and privtab-inherited members, not scikit-learn's or list's.

    ``get_params``, ``set_output``, ``set_fit_request`` and the like are scikit-learn's
    and documented there; ``append`` and ``count`` are Python's.
    """
    if what != "class":
        return None
    defined_in = getattr(obj, "__objclass__", None)
    target = obj.fget if isinstance(obj, property) else obj
    module = getattr(defined_in or target, "__module__", None)
    if isinstance(module, str) and not module.startswith("privtab"):
        return True
    return None


def _strip_doctest_flags(app, what, name, obj, options, lines):
    """Drop doctest directives (``# doctest: +SKIP``) from rendered examples."""
    flag = re.compile(r"\s*# doctest:.*$")
    lines[:] = [flag.sub("", line) for line in lines]


def setup(app):
    """Register the docstring and member filters and the public-name references."""
    app.connect("autodoc-process-docstring", _strip_doctest_flags)
    app.connect("missing-reference", _reference_by_public_name)
    app.connect("autodoc-skip-member", _skip_foreign_member)

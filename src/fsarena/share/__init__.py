"""Sharing results: a session as an anonymised, verifiable bundle, and the view merged from many.

share.bundle builds a bundle from an allow-list of a session's fields and seals
it with a content digest; share.identity keeps the salt its pseudonyms are keyed
by; share.view pools the bundles' within-host ratios by comparison key
(session/key.py); share.document says the view as report blocks, which
share.render lays out in each format report.formats offers the view. Importing this
package loads none of them.
"""

# The face: what other packages may import from this one, by module ("*": the
# module itself). tests/unit/test_layers.py holds every import across packages to it;
# a name another package needs is added here, on purpose.
FACE: dict[str, tuple[str, ...]] = {
    "bundle": (
        "SUFFIX",
        "build",
        "make",
        "read",
        "verify",
        "write",
    ),
    "identity": ("salt",),
    "render": ("render",),
    "view": (
        "Shared",
        "build",
    ),
}

"""Sharing results: a session as an anonymised, verifiable bundle, and the view merged from many.

share.bundle builds a bundle from an allow-list of a session's fields and seals
it with a content digest; share.identity keeps the salt its pseudonyms are keyed
by; share.view pools the bundles' within-host ratios by comparison key
(session/key.py); share.document says the view as report blocks, which
share.render lays out in each format report.formats offers the view. Importing this
package loads none of them.
"""

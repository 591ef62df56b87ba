"""The memory and instruction formats memtui reads, one module each.

Each module is a ``Dialect`` (``memtui.dialects.base``): how the format is detected,
which pages it claims (only those carrying its marks), how a page is normalised
(status, trust, kind, whether it is memory or instructions), its own checks, and what
its agent loads at the start of a session (``context``, in ``memtui.dialects.loading``'s
terms). ``memtui.dialects.detect`` lists them in ``DIALECTS``; adding a format is a
module here and a line there.
"""

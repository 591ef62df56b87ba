"""The search engine under the index: Whoosh, and everything of ours that reaches into it.

Whoosh 2.7 is kept as it is (no fork, no patch); what memtui needs beyond its public API
lives here and nowhere else: ``fastwrite`` (a quicker segment writer on Whoosh's codec),
``bulk`` (word queries scored a posting block at a time), ``scoring`` (BM25F with the
field lengths read once), ``mapped_files`` (segments read in place from their memory
map), ``readers`` (a searcher that keeps the readers of unchanged segments), ``segments``
(opening, creating and committing an index; its segment list). Outside this package only
Whoosh's public API is used (a test reads every attribute access of every module).

Importing the package installs ``mapped_files``: every index memtui opens or writes (the
search, the build helpers, the merge helper) goes through ``segments.open_index`` or
``segments.create_index``, so segments are never copied onto the heap (the merge helper
had copied all four segments of a 100,000-page build, 191 MB, before writing).
"""

from memtui.index.engine import mapped_files

mapped_files.install()

"""Storage: the bytes of a field on disk, read and written safely.

``safe_write`` (atomic, hash-guarded, confined writes; blobs of what a write
replaced), ``files`` (reading a file without following symlinks or blocking;
hashes), ``archive`` (``*.memoryfield.zip``), ``gitrepo`` (git plumbing),
``edit_buffer`` (text for an editor and back to exact bytes), ``locations``
(where memtui keeps its state and caches).

May import: ``memtui.errors`` and ``memtui.textsafety`` only. Knows nothing of
pages, frontmatter or review: that is the model's business, one layer up.
"""

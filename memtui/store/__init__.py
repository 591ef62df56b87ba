"""Storage: the bytes of a field on disk, read and written safely.

``safe_write`` (atomic, hash-guarded, confined writes; blobs of what a write
replaced), ``files`` (reading a file without following symlinks or blocking;
hashes), ``state`` (memtui's records under ``FIELD/.memtui/``, reached without
following links), ``signing`` (the user's key: signing what memtui wrote),
``signed_chunks`` (cache files of ``marshal`` chunks, each signed), ``gc_pause``
(no cycle collection while a large structure is built), ``archive`` (``*.memoryfield.zip``), ``gitrepo`` (git plumbing),
``edit_buffer`` (text for an editor and back to exact bytes), ``locations``
(where memtui keeps its state and caches).

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""

"""The Textual application: screens, widgets and styles (``*.tcss``).

May import every layer below (``field``, ``review``, ``index``, ``store``);
never ``memtui.cli``.
"""

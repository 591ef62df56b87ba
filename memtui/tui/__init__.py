"""The Textual application: screens, widgets and styles (``*.tcss``)."""

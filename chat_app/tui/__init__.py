"""The Textual client: ``sds-chat`` with no ``--headless``."""

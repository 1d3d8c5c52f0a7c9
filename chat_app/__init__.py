"""The sds-chat application: everything that touches the world."""

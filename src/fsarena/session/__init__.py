"""The session file: the one versioned record that crosses from measurement to reporting."""

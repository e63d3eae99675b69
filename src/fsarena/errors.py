"""The one exception type for problems a user can fix."""


class FsarenaError(Exception):
    """A problem the user can fix; the message says what is wrong and what to do next.

    The CLI prints it as one line and exits with code 2. Anything else is a bug
    and keeps its traceback.
    """

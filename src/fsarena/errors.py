"""The one exception type for problems a user can fix."""


class FsarenaError(Exception):
    """A problem the user can fix; the message says what is wrong and what to do next.

    The CLI prints it as one line and exits with code 2. Anything else is a bug
    and keeps its traceback.
    """


# Where a host fault's recorded text (tasks.base.HostFault: a missing tool, a permission,
# a missing server) turns from what is missing to its fix; reports open with the fix.
FIX_MARK = "; fix: "

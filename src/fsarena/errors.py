"""The one exception type for problems a user can fix."""


class FsarenaError(Exception):
    """A problem the user can fix; the message says what is wrong and what to do next.

    The CLI prints it as one line and exits with code 2. Anything else is a bug
    and keeps its traceback.
    """


def not_text(exc: UnicodeDecodeError) -> str:
    """Why a file given as text is not: the first byte that is not UTF-8, and where."""
    return f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})"


# Where a host fault's recorded text (tasks.base.HostFault: a missing tool, a permission,
# a missing server) turns from what is missing to its fix; reports open with the fix.
FIX_MARK = "; fix: "

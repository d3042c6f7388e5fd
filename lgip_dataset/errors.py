"""Error types shared by the dataset and evaluation sides."""


class LGIPError(Exception):
    """A user-facing error whose message names the file/row/argument and what to do.

    The CLI prints it without a traceback and exits with code 2.
    """


class DataError(LGIPError):
    """Bad input data: a malformed file, a missing image, an unreadable row."""

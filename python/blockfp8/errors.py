"""Exceptions raised by blockfp8. Each also derives from the builtin a Python caller expects
(ValueError for shapes and arguments, TypeError for dtypes, RuntimeError for devices), so code
written for vLLM's ops (which raise AssertionError/ValueError) can catch them generically."""


class Blockfp8Error(Exception):
    """Base class. `status` is the C ABI's status code (0 for errors found in Python)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status


class ShapeError(Blockfp8Error, ValueError):
    """Sizes or lengths that do not fit together."""


class LayoutError(Blockfp8Error, ValueError):
    """Strides, contiguity or alignment the op cannot use."""


class InvalidArgumentError(Blockfp8Error, ValueError):
    """An argument outside what the op supports (group size, eps, fp8 flavour, ...)."""


class DtypeError(Blockfp8Error, TypeError):
    """A tensor of the wrong dtype."""


class NonFiniteError(Blockfp8Error, ValueError):
    """NaN or infinity where finite values are required."""


class UnsupportedError(Blockfp8Error, NotImplementedError):
    """The backend or path cannot run this request."""


class DeviceError(Blockfp8Error, RuntimeError):
    """A device problem: wrong device, backend not built in, runtime failure, out of memory."""


class InternalError(Blockfp8Error, RuntimeError):
    """A bug in blockfp8 (a Rust panic caught at the boundary): please report the message."""

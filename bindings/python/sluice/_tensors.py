"""sluice.Tensors: a batch of named numpy arrays of any workload."""

import collections.abc


class Tensors(collections.abc.Mapping):
    """One batch as a read-only mapping from tensor name to numpy array.

    Arrays keep the pipeline's order and dtypes, view the engine's buffer
    without a copy, and keep it alive. Read a tensor as ``batch["label"]``
    or ``batch.label``; ``batch.to_dict()`` (or ``dict(batch)``) gives a
    plain, mutable dict of the same arrays.
    """

    __slots__ = ("_arrays",)

    def __init__(self, arrays):
        object.__setattr__(self, "_arrays", dict(arrays))

    def __getitem__(self, name):
        return self._arrays[name]

    def __iter__(self):
        return iter(self._arrays)

    def __len__(self):
        return len(self._arrays)

    def __getattr__(self, name):
        try:
            return self._arrays[name]
        except KeyError:
            raise AttributeError(
                f"batch has no tensor {name!r} (it has "
                f"{', '.join(self._arrays)})") from None

    def __setattr__(self, name, value):
        raise AttributeError("a batch is read-only; use to_dict() for a copy")

    def __dir__(self):
        return [*super().__dir__(), *self._arrays]

    def to_dict(self):
        """A plain dict of the same arrays (no copy of their data)."""
        return dict(self._arrays)

    def __repr__(self):
        shapes = ", ".join(f"{name}: {array.dtype}{list(array.shape)}"
                           for name, array in self._arrays.items())
        return f"Tensors({shapes})"

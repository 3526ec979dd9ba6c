# Staged values (Snek's Rep). Staging into S-expressions is not implemented yet:
# every runtime function that receives a Staged raises NotImplementedError.
class Staged:
    """A value known only when the staged graph runs (placeholder, see docs/runtime.md)."""

    def __init__(self, sexpr):
        self.sexpr = sexpr


def check_plain(*values):
    for v in values:
        if isinstance(v, Staged):
            raise NotImplementedError("stagd.runtime: staging of Staged values is not implemented yet")

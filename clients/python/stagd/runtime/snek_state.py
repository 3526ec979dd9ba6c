# SPDX-License-Identifier: Apache-2.0
# What Snek's forms (snek.py) and their staging (snek_staging.py) share: variables as
# cells (`var__`) and non-local return / break / continue as exceptions.


class NonLocalReturnValue(Exception):
    def __init__(self, value):
        super().__init__()
        self.value = value


class BreakLoop(Exception):
    pass


class ContinueLoop(Exception):
    pass


class _Var:
    __slots__ = ("value", "bound")

    def __init__(self):
        self.bound = False
        self.value = None


def var__():
    return _Var()


def assign__(var, value):
    var.value = value
    var.bound = True


def read__(var, name="variable"):
    if not var.bound:
        raise UnboundLocalError(f"cannot access local variable '{name}' where it is not "
                                f"associated with a value")
    v = var.value
    read = getattr(v, "staged_read", None)  # bound on some staged paths only (merge.py)
    return v if read is None else read()


def return__(value):
    raise NonLocalReturnValue(value)


def break__():
    raise BreakLoop()


def continue__():
    raise ContinueLoop()


def break_unless__(go):
    """The end of a Snek `for` body when the flag passes ran (sg__.for__ has no extra
    test): the loop stops before its next item unless `go` (not break__N …)."""
    if hasattr(go, "sexpr"):  # a staged flag: a break under a staged condition
        from .errors import StagingError
        raise StagingError("stagd: break under a staged condition cannot be staged in the Snek "
                           "style; convert with the AutoGraph style (the default)")
    if not go:
        raise BreakLoop()

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
    return var.value


def return__(value):
    raise NonLocalReturnValue(value)


def break__():
    raise BreakLoop()


def continue__():
    raise ContinueLoop()

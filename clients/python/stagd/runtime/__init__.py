# SPDX-License-Identifier: Apache-2.0
# Runtime called by code produced by the stagd converter (`import stagd.runtime as sg__`).
# Contract: docs/runtime.md. Plain Python values get exactly Python's semantics.
from .errors import (API_VERSION, require_api, SourceMap, converted, original_locations,
                     add_location_notes, Undefined, ld, public_names)
from .staged import Staged
from .sexpr import _stack as staging  # non-empty while a trace is built: converted bodies run
from .sexpr import converted_forms
from .control import (if_stmt, while_stmt, for_stmt, if_exp, and_, or_, not_,
                      compare_, in_, not_in_, assert_stmt, ret)
from .snek import if__, while__, for__
from .snek_state import (var__, assign__, read__, return__, break__, continue__, break_unless__,
                         NonLocalReturnValue, BreakLoop, ContinueLoop)
from .builtins_ import (print_, len_, range_, enumerate_, zip_, int_, float_, bool_,
                        abs_, min_, max_, sum_, isinstance_, new_list, list_append,
                        list_pop, get_item, set_item, slice_, aug_item)
from .calls import converted_call, rep_fun, set_converter
from .directives import set_loop_options, set_element_type, StagedList
from .errors import StagingError
from .merge import MaybeUndefined
from . import static as _static  # noqa: F401 — Staged's shape / len / iteration

# SPDX-License-Identifier: Apache-2.0
"""pyfront_corpus.py — Python functions in the subset the daemon stages from source
(docs/pyfront.md). test_pyfront.py runs each with `stagctl run pyfront_corpus.py --entry
NAME --args JSON` and compares with CPython running the same function on the same
arguments; GRAD lists the functions whose gradients it checks against finite
differences. The daemon never runs this module: CASES and GRAD below are for the test.
"""
import math

import numpy as np
import stagd

SCALE = 3
EPS = 1e-3
SHAPE = (2, 3)
HALF = SCALE / 2
TWO_PI = 2 * math.pi


# ------------------------------------------------------------------ arithmetic

def add_mul(a, b):
    return a + b * 2


def true_div(a, b):
    return a / b


def floor_div_mod(a, b):
    return a // b, a % b


def int_pow(a, b):
    return a ** b


def neg_pos(a):
    return -a, +a


def mixed_types(i, f):
    return i * f + i // 2 + True


def poly(x):
    return 3.0 * x ** 3 - 2.0 * x ** 2 + x - 7.0


def horner(x):
    coeffs = (1.0, -2.0, 0.5, 3.0)
    acc = 0.0
    for c in coeffs:
        acc = acc * x + c
    return acc


def module_constants(x):
    return x * SCALE + EPS + HALF + TWO_PI


def aug_assign(x):
    y = x
    y += 1.0
    y *= 3.0
    y -= 0.5
    y /= 2.0
    y **= 2
    return y


def int_aug(n):
    k = n
    k //= 3
    k %= 5
    return k


def abs_pow_builtins(a, b):
    return abs(a) + pow(b, 2) + abs(-b)


def divmod_builtin(a, b):
    return divmod(a, b)


def conversions(x):
    return int(x), float(int(x)), bool(x), float("inf") > x


def int_trunc(x):
    return int(x) + int(-x)


# ----------------------------------------------------------------- comparisons

def compare_chain(a, b, c):
    return a < b < c, a <= b > c, a == b != c


def bool_ops(a, b):
    return (a and b) or (not a and 7)


def short_circuit(x):
    return x != 0 and 10 / x > 1


def or_default(x):
    return x or 5


def cond_expr(x):
    return x * 2 if x > 0 else -x if x < -1 else 0.5


def max_min(a, b, c):
    return max(a, b, c), min(a, b), max(a, a)


def clamp(x, lo, hi):
    if x < lo:
        return lo
    elif x > hi:
        return hi
    else:
        return x


def sign(x):
    if x > 0:
        s = 1
    elif x < 0:
        s = -1
    else:
        s = 0
    return s


def not_not(x):
    return not not x, not x


# ------------------------------------------------------------------------- if

def abs_if(x):
    if x < 0:
        x = -x
    return x


def if_both_assign(x):
    if x > 1.0:
        y = x * x
        z = 1.0
    else:
        y = x + 1.0
        z = 2.0
    return y * z


def nested_if(a, b):
    if a > 0:
        if b > 0:
            r = a * b
        else:
            r = a - b
    else:
        if b > 0:
            r = b - a
        else:
            r = -(a + b)
    return r


def early_return(x):
    if x > 10.0:
        return x
    y = x * 2.0
    if y > 10.0:
        return y
    return y * y


def early_return_nested(a, b):
    if a > 0:
        if b > 0:
            return a + b
        c = a * b
    else:
        c = b - a
    return c * 2


def piecewise(x):
    if x < -1.0:
        return -x * x
    if x < 1.0:
        return x * x * x
    return 2.0 * x - 1.0


# ---------------------------------------------------------------------- loops

def while_sum(n):
    s = 0
    i = 0
    while i < n:
        s += i
        i += 1
    return s


def while_float(x):
    it = 0
    while x > 1.0:
        x = x / 2.0
        it += 1
    return x, it


def halvings(x):
    it = 0
    while x > 1.0:
        x = x / 2.0
        it += 1
    return x * it


def for_range(n):
    s = 0
    for i in range(n):
        s = s + i * i
    return s


def for_range_start_stop(a, b):
    s = 0
    for i in range(a, b):
        s += i
    return s


def for_range_step(n):
    s = 0
    for i in range(0, n, 3):
        s += i
    for j in range(n, 0, -2):
        s -= j
    return s


def loop_var_after(n):
    last = -1
    for i in range(n):
        last = i
    return last


def break_continue(n):
    total = 0
    for i in range(n):
        if i == 7:
            break
        if i % 3 == 0:
            continue
        total += i
    return total


def for_else(n):
    for i in range(n):
        if i * i > 20:
            found = i
            break
    else:
        found = -1
    return found


def while_else(n):
    i = 0
    while i < n:
        i += 2
    else:
        i = i * 10
    return i


def while_true_break(x):
    steps = 0
    while True:
        x = x * 1.5
        steps += 1
        if x > 100.0:
            break
    return x, steps


def return_in_loop(n):
    for i in range(100):
        if i * i >= n:
            return i
    return -1


def return_in_nested_loop(n):
    for i in range(1, 10):
        for j in range(1, 10):
            if i * j == n:
                return i, j
    return 0, 0


def nested_loops(n, m):
    s = 0
    for i in range(n):
        j = 0
        while j < m:
            s += i * j
            j += 1
    return s


def newton_sqrt(a):
    x = a
    for _ in range(30):
        x = 0.5 * (x + a / x)
    return x


def collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def gcd_loop(a, b):
    while b != 0:
        a, b = b, a % b
    return a


def fib_loop(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


def for_tuple(t):
    s = 0.0
    for v in t:
        s = s + v * v
    return s


def for_enumerate(t):
    s = 0.0
    for i, v in enumerate(t):
        s = s + i * v
    for i, v in enumerate(t, 10):
        s = s + i
    return s


def for_zip(a, b):
    s = 0.0
    for x, y in zip(a, b):
        s = s + x * y
    return s


def for_tensor_rows(m):
    s = 0.0
    for row in m:
        s = s + np.sum(row) * 2.0
    return s


def continue_in_while(n):
    i = 0
    odd = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        odd += i
    return odd


def loop_carrying_tuple(n):
    pair = (0, 1)
    for _ in range(n):
        pair = (pair[1], pair[0] + pair[1])
    return pair


def power_loop(x, n):
    r = 1.0
    for _ in range(n):
        r = r * x
    return r


# --------------------------------------------------------- functions and calls

def square(x):
    return x * x


def cube(x):
    return x * square(x)


def call_chain(x):
    return cube(square(x) + 1.0)


def defaults(x, k=2, scale=1.5):
    return x * k + scale


def call_defaults(x):
    return defaults(x) + defaults(x, 3) + defaults(x, scale=0.5) + defaults(k=1, x=x)


def keyword_call(a, b):
    return true_div(b=a, a=b)


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


def gcd(a, b):
    return a if b == 0 else gcd(b, a % b)


def ackermann(m, n):
    if m == 0:
        return n + 1
    if n == 0:
        return ackermann(m - 1, 1)
    return ackermann(m - 1, ackermann(m, n - 1))


def is_even(n):
    if n == 0:
        return True
    return is_odd(n - 1)


def is_odd(n):
    if n == 0:
        return False
    return is_even(n - 1)


def rec_power(x, n):
    if n == 0:
        return 1.0
    half = rec_power(x, n // 2)
    if n % 2 == 0:
        return half * half
    return half * half * x


def sum_to(n):
    return 0 if n == 0 else n + sum_to(n - 1)


# -------------------------------------------------------------------- closures

def make_adder(k):
    def add(x):
        return x + k
    return add


def use_adder(x):
    add3 = make_adder(3.0)
    return add3(x) * add3(1.0)


def closure_reads_param(x, y):
    def f(z):
        return z * x + y
    return f(2.0) + f(x)


def nested_closures(x):
    def outer(a):
        def inner(b):
            return a * b + x
        return inner(a + 1.0)
    return outer(x)


def lambda_call(x):
    f = lambda t: t * t + 1.0
    return f(x) + (lambda u, v: u - v)(x, 1.0)


def apply_twice(f, x):
    return f(f(x))


def higher_order(x):
    return apply_twice(lambda z: z * 3.0 + 1.0, x) + apply_twice(square, x)


def compose(f, g):
    return lambda x: f(g(x))


def use_compose(x):
    h = compose(square, lambda t: t + 1.0)
    return h(x)


def nested_recursive(n):
    def walk(k, acc):
        if k == 0:
            return acc
        return walk(k - 1, acc + k)
    return walk(n, 0)


def nested_mutual(n):
    def ev(k):
        return True if k == 0 else od(k - 1)

    def od(k):
        return False if k == 0 else ev(k - 1)

    return ev(n), od(n)


def closure_in_loop_call(n, w):
    total = 0.0
    for i in range(n):
        scale = lambda t: t * w
        total = total + scale(float(i))
    return total


def select_function(flag, x):
    f = square if flag else cube
    return f(x)


def closure_over_tuple(x):
    pair = (x, x + 1.0)

    def first_times(k):
        a, b = pair
        return a * k + b
    return first_times(2.0)


lambda_module = lambda x: x * 0.5 + 1.0


def uses_module_lambda(x):
    return lambda_module(x) + lambda_module(2.0)


# ---------------------------------------------------------------------- tuples

def tuple_build(a, b):
    return (a, b, a + b)


def tuple_unpack(t):
    a, b, c = t
    return a * b - c


def swap(a, b):
    a, b = b, a
    return a - b


def nested_unpack(t):
    (a, b), c = t
    return a + b * c


def tuple_index(t, i):
    return t[i] + t[-1]


def tuple_len(t):
    return len(t) * 2


def return_multiple(x):
    return x, x * 2, (x * 3, x * 4)


def min_max_pair(a, b):
    lo, hi = (a, b) if a < b else (b, a)
    return hi - lo


# --------------------------------------------------------------------- tensors

def np_exp_sum(x):
    return np.sum(np.exp(x))


def np_tanh_mean(x):
    return np.mean(np.tanh(x * 2.0))


def np_axis_sum(x):
    return np.sum(x, axis=0), np.sum(x, axis=1), x.sum(axis=-1)


def np_max_min_argmax(x):
    return np.max(x), np.min(x, axis=0), np.argmax(x, axis=1)


def np_matmul(a, b):
    return a @ b


def np_matmul_fn(a, b):
    return np.matmul(a, b) + a @ np.transpose(np.ones((2, 2)))


def np_shapes(x):
    return x.shape, x.ndim, x.size, np.shape(x)[0]


def np_transpose_T(x):
    return x.T * 2.0


def np_reshape(x):
    return x.reshape((3, 2)), x.reshape(6), np.reshape(x, (1, 6))


def np_where(x):
    return np.where(x > 0.0, x, 0.0)


def np_zeros_ones(n):
    return np.zeros((2, n)), np.ones(3, dtype=np.float32), np.full((2,), 7.0)


def np_arange(n):
    return np.arange(n) * 2


def np_concat_stack(a, b):
    return np.concatenate((a, b), axis=0), np.stack((a, b), axis=1)


def np_take(x):
    return np.take(x, 1, axis=1)


def np_slice(x):
    return x[1:3], x[::-1], x[:, 1], x[1, 2], x[0, :2]


def np_index_loop(x):
    s = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            s = s + x[i, j] * (i + 1)
    return s


def np_elementwise_ops(a, b):
    return np.maximum(a, b), np.minimum(a, b), np.sqrt(a * a + 1.0), np.log(b * b + 1.0), np.abs(a - b)


def np_astype(x):
    return x.astype(np.float32) * 2.0, (x > 0.5).astype("float64")


def np_square_sin_cos(x):
    return np.square(np.sin(x)) + np.square(np.cos(x))


def sum_sin_cos(x):
    return np.sum(np_square_sin_cos(x) * x)


def stagd_primitives(x):
    return stagd.softmax(x), stagd.relu(x - 0.5), stagd.sigmoid(x)


def softmax_manual(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


def mlp(x, w1, w2):
    h = np.tanh(x @ w1)
    return np.sum(1.0 / (1.0 + np.exp(-(h @ w2))))


def mse_loss(w, x, y):
    pred = x @ w
    d = pred - y
    return np.mean(d * d)


def rnn(xs, w, u):
    h = np.zeros(2)
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h @ u)
    return np.sum(h)


def gd_steps(w, x, y):
    for _ in range(5):
        g = 2.0 * x.T @ (x @ w - y) / 4.0
        w = w - 0.1 * g
    return w


def tensor_if(x):
    if np.sum(x) > 0.0:
        return x * 2.0
    return -x


def tensor_scalar_mix(x, s):
    return x * s + s * s


def tensor_scalar_loss(x, s):
    return np.mean(tensor_scalar_mix(x, s))


# ------------------------------------------------------------------ assertions

def checked_sqrt(x):
    assert x >= 0.0, "x must be non-negative"
    return np.sqrt(x)


def raise_on_negative(x):
    if x < 0:
        raise ValueError("negative input")
    return x * 2


# ---------------------------------------------------------------------- grad

def grad_of_cube(x):
    return stagd.grad(cube)(x)


def grad_of_grad(x):
    return stagd.grad(grad_of_cube)(x)


def grad_two_args(x, y):
    return stagd.grad(mixed_grad_target, (0, 1))(x, y)


def mixed_grad_target(x, y):
    return x * x * y + np.sin(y)


def grad_of_lambda(x):
    return stagd.grad(lambda t: t * t * x)(3.0)


# ------------------------------------------------------------------ for the test

def _f64(*shape, seed=0):
    r = np.random.default_rng(seed)
    return r.uniform(-1.0, 1.0, size=shape)


X23 = _f64(2, 3, seed=1)
X32 = _f64(3, 2, seed=2)
V3 = _f64(3, seed=3)
V3B = _f64(3, seed=4)
XS = _f64(4, 2, seed=5)
W22 = _f64(2, 2, seed=6)
U22 = _f64(2, 2, seed=7)
X42 = _f64(4, 2, seed=8)
Y4 = _f64(4, seed=9)
W2 = _f64(2, seed=10)

CASES = {
    "add_mul": [(1, 2), (1.5, -2.25)],
    "true_div": [(7, 2), (1.0, 3.0), (-7, 2)],
    "floor_div_mod": [(7, 2), (-7, 2), (7, -2), (7.5, 2.0), (-7.5, 2.0)],
    "int_pow": [(2, 10), (2, -2), (2.0, 0.5), (-8, 3)],
    "neg_pos": [(3,), (-2.5,), (True,)],
    "mixed_types": [(3, 1.5), (-4, 0.25)],
    "poly": [(1.5,), (-0.3,)],
    "horner": [(0.7,), (-2.0,)],
    "module_constants": [(2,), (0.5,)],
    "aug_assign": [(1.0,), (-3.5,)],
    "int_aug": [(47,), (-47,)],
    "abs_pow_builtins": [(-3, 4), (2.5, -1.5)],
    "divmod_builtin": [(17, 5), (-17, 5), (17.5, -5.0)],
    "conversions": [(2.7,), (-2.7,), (0.0,), (5,)],
    "int_trunc": [(3.9,), (-3.9,)],
    "compare_chain": [(1, 2, 3), (3, 2, 1), (2, 2, 1), (1, 1, 1)],
    "bool_ops": [(0, 5), (3, 0), (2, 4), (0, 0)],
    "short_circuit": [(0,), (5,), (20,)],
    "or_default": [(0,), (3,), (0.0,)],
    "cond_expr": [(2.0,), (-3.0,), (-0.5,)],
    "max_min": [(1, 3, 2), (2.5, -1.0, 2.5), (1, 1.0, 0)],
    "clamp": [(5, 0, 10), (-5, 0, 10), (15, 0, 10), (2.5, 0.0, 1.0)],
    "sign": [(3.5,), (-2,), (0,)],
    "not_not": [(0,), (2.5,)],
    "abs_if": [(-2.5,), (3,)],
    "if_both_assign": [(2.0,), (0.5,)],
    "nested_if": [(1, 2), (1, -2), (-1, 2), (-1, -2)],
    "early_return": [(11.0,), (6.0,), (1.5,)],
    "early_return_nested": [(1, 2), (1, -2), (-1, 2)],
    "piecewise": [(-2.0,), (0.5,), (3.0,)],
    "while_sum": [(10,), (0,)],
    "while_float": [(100.0,), (0.5,)],
    "halvings": [(100.0,), (0.5,)],
    "for_range": [(10,), (0,)],
    "for_range_start_stop": [(3, 9), (5, 2)],
    "for_range_step": [(10,), (7,)],
    "loop_var_after": [(5,), (0,)],
    "break_continue": [(20,), (5,)],
    "for_else": [(10,), (3,)],
    "while_else": [(7,), (0,)],
    "while_true_break": [(1.0,), (150.0,)],
    "return_in_loop": [(50,), (10000000,)],
    "return_in_nested_loop": [(12,), (97,)],
    "nested_loops": [(4, 5), (0, 3)],
    "newton_sqrt": [(2.0,), (10.0,)],
    "collatz": [(27,), (1,)],
    "gcd_loop": [(48, 18), (17, 5)],
    "fib_loop": [(20,), (1,)],
    "for_tuple": [((1.0, 2.0, 3.0),), ((),)],
    "for_enumerate": [((1.0, -2.0, 0.5),)],
    "for_zip": [((1.0, 2.0, 3.0), (4.0, 5.0)), ((1.0,), (2.0, 3.0))],
    "for_tensor_rows": [(X23,)],
    "continue_in_while": [(10,), (1,)],
    "loop_carrying_tuple": [(10,)],
    "power_loop": [(1.5, 4), (-2.0, 3)],
    "square": [(3,), (-1.5,)],
    "cube": [(2,), (0.5,)],
    "call_chain": [(0.5,), (-1.0,)],
    "defaults": [(2.0, 2, 1.5), (1.0, 5, 0.25)],
    "call_defaults": [(2.0,)],
    "keyword_call": [(2.0, 8.0)],
    "fact": [(10,), (0,)],
    "fib": [(15,), (1,)],
    "gcd": [(1071, 462)],
    "ackermann": [(2, 3), (1, 5)],
    "is_even": [(10,), (7,)],
    "is_odd": [(10,), (7,)],
    "rec_power": [(1.1, 13), (2.0, 10)],
    "sum_to": [(100,)],
    "use_adder": [(1.5,)],
    "closure_reads_param": [(2.0, 0.5)],
    "nested_closures": [(1.5,)],
    "lambda_call": [(2.0,)],
    "higher_order": [(0.5,)],
    "use_compose": [(2.0,)],
    "nested_recursive": [(10,)],
    "nested_mutual": [(6,), (7,)],
    "closure_in_loop_call": [(5, 0.5)],
    "select_function": [(True, 3.0), (False, 3.0)],
    "closure_over_tuple": [(1.5,)],
    "uses_module_lambda": [(4.0,)],
    "tuple_build": [(1, 2.5)],
    "tuple_unpack": [((2.0, 3.0, 1.0),)],
    "swap": [(1, 5)],
    "nested_unpack": [(((1, 2), 3),)],
    "tuple_index": [((1.0, 2.0, 3.0), 0), ((1.0, 2.0, 3.0), -2)],
    "tuple_len": [((1, 2, 3),)],
    "return_multiple": [(1.5,)],
    "min_max_pair": [(3.0, 1.0), (1.0, 3.0)],
    "np_exp_sum": [(V3,), (X23,)],
    "np_tanh_mean": [(X23,)],
    "np_axis_sum": [(X23,)],
    "np_max_min_argmax": [(X23,)],
    "np_matmul": [(X23, X32), (V3, X32)],
    "np_matmul_fn": [(X32, W22)],
    "np_shapes": [(X23,)],
    "np_transpose_T": [(X23,)],
    "np_reshape": [(X23,)],
    "np_where": [(X23,)],
    "np_zeros_ones": [(3,)],
    "np_arange": [(5,)],
    "np_concat_stack": [(V3, V3B)],
    "np_take": [(X23,)],
    "np_slice": [(X32 @ X23,)],
    "np_index_loop": [(X23,)],
    "np_elementwise_ops": [(V3, V3B)],
    "np_astype": [(np.abs(V3),)],
    "np_square_sin_cos": [(V3,)],
    "sum_sin_cos": [(V3,)],
    "stagd_primitives": [(V3,)],
    "softmax_manual": [(V3,)],
    "mlp": [(X23, X32, W2)],
    "mse_loss": [(W2, X42, Y4)],
    "rnn": [(XS, W22, U22)],
    "gd_steps": [(W2, X42, Y4)],
    "tensor_if": [(V3,), (-np.abs(V3),)],
    "tensor_scalar_mix": [(X23, 1.5)],
    "tensor_scalar_loss": [(X23, 1.5)],
    "checked_sqrt": [(4.0,)],
    "raise_on_negative": [(3,)],
    "grad_of_cube": [(2.0,)],
    "grad_of_grad": [(2.0,)],
    "grad_two_args": [(1.5, 0.5)],
    "mixed_grad_target": [(1.5, 0.5)],
    "grad_of_lambda": [(2.0,)],
}

# functions whose gradients test_pyfront checks against central differences, at every
# case of CASES whose argument there is a float or a float64 array: {name: [wrt...]}
GRAD = {
    "add_mul": [0, 1], "true_div": [0, 1], "poly": [0], "horner": [0], "module_constants": [0],
    "aug_assign": [0], "cond_expr": [0], "if_both_assign": [0], "early_return": [0],
    "piecewise": [0], "halvings": [0], "newton_sqrt": [0], "power_loop": [0],
    "call_chain": [0], "defaults": [0], "call_defaults": [0], "keyword_call": [0, 1],
    "rec_power": [0], "use_adder": [0], "closure_reads_param": [0, 1], "nested_closures": [0],
    "lambda_call": [0], "higher_order": [0], "use_compose": [0], "closure_in_loop_call": [1],
    "closure_over_tuple": [0], "uses_module_lambda": [0], "min_max_pair": [0, 1],
    "np_exp_sum": [0], "np_tanh_mean": [0], "np_index_loop": [0], "sum_sin_cos": [0],
    "softmax_manual": [], "mlp": [0, 1, 2], "mse_loss": [0, 1, 2], "rnn": [0, 1, 2],
    "tensor_scalar_loss": [0, 1], "checked_sqrt": [0], "mixed_grad_target": [0, 1],
    "grad_of_cube": [0], "for_tensor_rows": [0], "tuple_unpack": [0], "for_tuple": [0],
    "cube": [0], "square": [0],
}

# what CPython cannot run without a daemon (stagd.grad): the exact values instead
ORACLE = {
    "grad_of_cube": lambda x: 3.0 * x * x,
    "grad_of_grad": lambda x: 6.0 * x,
    "grad_two_args": lambda x, y: (2.0 * x * y, x * x + math.cos(y)),
    "grad_of_lambda": lambda x: 6.0 * x,
    "stagd_primitives": lambda x: (np.exp(x) / np.sum(np.exp(x)), np.maximum(x - 0.5, 0.0), 1.0 / (1.0 + np.exp(-x))),
}

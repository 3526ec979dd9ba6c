# SPDX-License-Identifier: Apache-2.0
"""Semantic-preservation corpus: decorated functions (user decorators, functools.wraps,
decorators with arguments), methods with control flow (instance, class, static,
properties, dunder methods), inheritance and super(). Methods are exercised through
module-level driver functions, which are converted too."""

import functools

CALLS = []


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        CALLS.append(fn.__name__)
        return fn(*args, **kwargs)
    return wrapper


def repeat(n):
    def deco(fn):
        def wrapper(x):
            r = x
            for _ in range(n):
                r = fn(r)
            return r
        return wrapper
    return deco


@logged
def decorated_branch(x):
    if x > 0:
        return 'pos'
    return 'nonpos'


@repeat(3)
def decorated_repeat(x):
    if x % 2:
        return x * 3 + 1
    return x // 2


@logged
@repeat(2)
def stacked(x):
    return x + [len(x)]


def memo(fn):
    cache = {}

    def wrapper(n):
        if n not in cache:
            cache[n] = fn(n)
        return cache[n]
    wrapper.cache = cache
    return wrapper


@memo
def fib(n):
    if n < 2:
        return n
    return fib(n - 1) + fib(n - 2)


class Account:
    rate = 2

    def __init__(self, owner, balance=0):
        self.owner = owner
        self.balance = balance
        self.history = []

    def deposit(self, amount):
        if amount <= 0:
            raise ValueError('deposit must be positive')
        self.balance += amount
        self.history.append(('d', amount))
        return self.balance

    def withdraw_all(self, amounts):
        done = 0
        for a in amounts:
            if a > self.balance:
                break
            self.balance -= a
            done += 1
        else:
            self.history.append('all')
        return done

    @property
    def rich(self):
        return self.balance > 100

    @classmethod
    def with_bonus(cls, owner):
        acct = cls(owner, 10 * cls.rate)
        return acct

    @staticmethod
    def fee(amount):
        if amount < 10:
            return 1
        return amount // 10

    def __repr__(self):
        return 'Account(%r, %r)' % (self.owner, self.balance)

    def __eq__(self, other):
        return isinstance(other, Account) and self.balance == other.balance

    def __len__(self):
        return len(self.history)


class Savings(Account):
    rate = 3

    def deposit(self, amount):
        r = super().deposit(amount)
        if r > 50:
            self.balance += 1
        return self.balance


class Vec:
    __slots__ = ('x', 'y')

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def __iter__(self):
        yield self.x
        yield self.y

    def norm1(self):
        total = 0
        for c in self:
            total += c if c >= 0 else -c
        return total


def use_account(ops):
    a = Account('ann')
    for op, v in ops:
        if op == 'd':
            a.deposit(v)
        elif op == 'w':
            a.withdraw_all([v])
        else:
            raise KeyError(op)
    return a.balance, a.rich, len(a), repr(a)


def use_classmethod(name):
    a = Account.with_bonus(name)
    b = Savings.with_bonus(name)
    return a.balance, b.balance, type(b).__name__


def use_staticmethod(xs):
    return [Account.fee(x) for x in xs]


def use_inheritance(amounts):
    s = Savings('sam')
    out = []
    for a in amounts:
        out.append(s.deposit(a))
    return out, s.history


def use_withdraw_else(balance, amounts):
    a = Account('x', balance)
    n = a.withdraw_all(amounts)
    return n, a.balance, a.history


def use_eq(a, b):
    return Account('p', a) == Account('q', b), Account('p', a) == a


def use_vec(a, b):
    v = Vec(*a) + Vec(*b)
    return v.norm1(), list(v)


def return_instance(x):
    a = Account('r', x)
    if x > 5:
        a.deposit(x)
    return a


def method_as_value(xs):
    acc = Account('m')
    dep = acc.deposit
    for x in xs:
        dep(x)
    return acc.balance


def class_defined_in_function(n):
    class Local:
        def __init__(self, v):
            self.v = v

        def double(self):
            if self.v is None:
                return None
            return self.v * 2
    return [Local(i).double() for i in range(n)]


def call_decorated(xs):
    out = []
    for x in xs:
        out.append(decorated_branch(x))
    return out, list(CALLS)


def dunder_len_bool(items):
    class Bag:
        def __init__(self, xs):
            self.xs = xs

        def __len__(self):
            return len(self.xs)
    b = Bag(items)
    if b:
        return 'full', len(b)
    return 'empty', 0


CASES = {
    'decorated_branch': [(1,), (-1,), (None,)],
    'decorated_repeat': [(7,), (8,), ('a',)],
    'stacked': [([],), ([1],), ('s',)],
    'fib': [(10,), (0,), (20,)],
    'use_account': [([('d', 50), ('w', 20), ('d', 100)],), ([('d', -1)],), ([('x', 1)],), ([],)],
    'use_classmethod': [('a',)],
    'use_staticmethod': [([5, 50, 123],), ([],), (['a'],)],
    'use_inheritance': [([10, 45, 5],), ([],), ([0],)],
    'use_withdraw_else': [(100, [10, 20]), (10, [5, 10]), (0, [])],
    'use_eq': [(1, 1), (1, 2)],
    'use_vec': [((1, -2), (3, 4)), ((0, 0), (0, 0)), ((1,), (2, 3))],
    'return_instance': [(3,), (10,), (-1,)],
    'method_as_value': [([1, 2],), ([],), ([0],)],
    'class_defined_in_function': [(3,), (0,)],
    'call_decorated': [([1, -1, 0],), ([],)],
    'dunder_len_bool': [([1],), ([],)],
}

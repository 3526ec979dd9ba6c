# -*- coding: Foo_Bar -*-
x = 1

async def g():
    async with a as b, c:
        await x
    async for i in y:
        yield i

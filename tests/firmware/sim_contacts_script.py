# Run by test_sim_contacts.py on the unix MicroPython, firmware/ on its path:
# the simulated chip's hardware layer (hardware_sim.Hardware) reading its
# stdin, the board's event loop stalled 300 ms once, just after the first
# change told ahead was read (as a loaded host stops a board's process);
# prints the edges in the order the firmware would take them, then "end".
import asyncio
import time

import hardware_sim

stall = []
create_task = asyncio.create_task


def stalling(coro):
    t = create_task(coro)
    if stall:                       # the first wait made, then the host stands still
        time.sleep_ms(stall.pop())
    return t


async def watch(hw, n):
    got = []
    while len(got) < n:
        await hw.press_flag.wait()
        hw.press_flag.clear()
        while hw.edges:
            station, level, _ = hw.edges.pop(0)
            got.append((station, level))
    print(got)
    print("end")


async def main():
    hw = hardware_sim.Hardware({"buttons": [0, 0]})
    asyncio.create_task(hw.run())
    stall.append(300)
    print("ready")
    await watch(hw, 3)


asyncio.create_task = stalling
asyncio.run(main())

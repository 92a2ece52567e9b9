"""The timer plugin: `timer_set` schedules a reminder; when it is due, an L3 interrupt.

The plugin keeps no clock of its own: it asks the kernel to wake it (`wake_after`), so the
reminder follows the kernel's clock, the one tests and replays move by hand.
"""

from hologram.plugins.runtime import PluginApp

app = PluginApp()
pending: dict[str, dict] = {}

PARAMETERS = {
    "type": "object",
    "properties": {
        "seconds": {"type": "number", "minimum": 0, "description": "delay from now"},
        "message": {"type": "string", "description": "what to remind of"},
        "channel": {"type": "string", "default": "notebook"},
    },
    "required": ["seconds", "message"],
    "additionalProperties": False,
}


@app.tool("Set a reminder: after `seconds`, the message comes back as an interrupt.", PARAMETERS)
async def timer_set(args):
    key = f"timer-{len(pending) + 1}"
    pending[key] = args
    await app.sdk.wake_after(args["seconds"], key, fire)
    return f"{key} set for {args['seconds']:g} s from now"


async def fire(key):
    args = pending.pop(key)
    await app.sdk.inject_interrupt(
        f"[timer] reminder: {args['message']}", args.get("channel", "notebook"), level=3
    )


app.run()

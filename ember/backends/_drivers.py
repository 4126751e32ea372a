"""Device enumeration shared by the backends: one IREE HAL driver, its devices, and why it is
missing when it is."""

from __future__ import annotations

import iree.runtime as rt

from ember.errors import BackendUnavailableError


def enumerate_devices(driver_name: str, cls) -> tuple[list, str | None]:
    """``([cls(...) per device], None)``, or ``([], reason)`` when the driver cannot load or
    sees no device. The devices' HAL devices are created when first used (``Device.hal``)."""
    try:
        driver = rt.get_driver(driver_name)
        infos = driver.query_available_devices()
    except Exception as e:  # IREE raises RuntimeError naming the missing library
        return [], str(e).strip().splitlines()[-1]
    if not infos:
        return [], f"the {driver_name} driver loaded but reports no device"
    return [cls(driver_name, i, info.get("name", ""),
                create=lambda info=info: driver.create_device(info))
            for i, info in enumerate(infos)], None


def device_at(enumerated: tuple[list, str | None], backend: str, hint: str, index: int):
    """Device ``index`` of an ``enumerate_devices`` result, or the error saying what to
    install."""
    found, reason = enumerated
    if index < len(found):
        return found[index]
    raise unavailable(backend, reason, hint, index)


def unavailable(backend: str, reason: str | None, hint: str, index: int = 0):
    """The error for a backend without device ``id``."""
    what = f"no {backend} device {index} on this machine"
    why = f" ({reason})" if reason else ""
    return BackendUnavailableError(
        f"{what}{why}. {hint} Compiling for {backend!r} works without it "
        f"(ember.jit(f, backend={backend!r}).lower(...).compile()); running needs the device.")

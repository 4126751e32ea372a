"""What a Vulkan device can store and compute, asked of the Vulkan loader itself.

IREE's runtime does not report a device's features and its compiler cannot target "this
device"; ember reads them here (ctypes, the loader's C API: an instance, the physical
devices, ``vkGetPhysicalDeviceFeatures2``) so that the default Vulkan target has the
device's own 8/16/64-bit capabilities instead of the generic profile's, whose emulation of
8- and 16-bit storage loses the last partial word of odd-sized buffers.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass

_u32 = ctypes.c_uint32
_INSTANCE_CREATE_INFO = 1
_FEATURES_2 = 1000059000
_16BIT_STORAGE = 1000083000
_FLOAT16_INT8 = 1000082000
_8BIT_STORAGE = 1000177000
_API_1_1 = (1 << 22) | (1 << 12)
# Offsets into VkPhysicalDeviceFeatures (55 VkBool32 in the order of vulkan_core.h).
_SHADER_FLOAT64, _SHADER_INT64, _SHADER_INT16 = 39, 40, 41


class _Features2(ctypes.Structure):
    _fields_ = [("sType", _u32), ("pNext", ctypes.c_void_p), ("features", _u32 * 55)]


class _Storage8(ctypes.Structure):
    _fields_ = [("sType", _u32), ("pNext", ctypes.c_void_p), ("storageBuffer", _u32),
                ("uniformAndStorageBuffer", _u32), ("pushConstant", _u32)]


class _Storage16(ctypes.Structure):
    _fields_ = [("sType", _u32), ("pNext", ctypes.c_void_p), ("storageBuffer", _u32),
                ("uniformAndStorageBuffer", _u32), ("pushConstant", _u32),
                ("inputOutput", _u32)]


class _Float16Int8(ctypes.Structure):
    _fields_ = [("sType", _u32), ("pNext", ctypes.c_void_p), ("shaderFloat16", _u32),
                ("shaderInt8", _u32)]


class _AppInfo(ctypes.Structure):
    _fields_ = [("sType", _u32), ("pNext", ctypes.c_void_p), ("pApplicationName", ctypes.c_char_p),
                ("applicationVersion", _u32), ("pEngineName", ctypes.c_char_p),
                ("engineVersion", _u32), ("apiVersion", _u32)]


class _InstanceInfo(ctypes.Structure):
    _fields_ = [("sType", _u32), ("pNext", ctypes.c_void_p), ("flags", _u32),
                ("pApplicationInfo", ctypes.POINTER(_AppInfo)), ("enabledLayerCount", _u32),
                ("ppEnabledLayerNames", ctypes.c_void_p), ("enabledExtensionCount", _u32),
                ("ppEnabledExtensionNames", ctypes.c_void_p)]


@dataclass(frozen=True)
class VulkanFeatures:
    """The capabilities of one Vulkan device that decide ember's target for it."""

    name: str
    float16: bool
    float64: bool
    int8: bool
    int16: bool
    int64: bool
    storage8: bool
    storage16: bool

    def spirv_features(self) -> str:
        """IREE's ``--iree-vulkan-target-features`` for these capabilities (on top of the
        generic profile, which has none of them)."""
        caps = [("Float16", self.float16 and self.storage16), ("Float64", self.float64),
                ("Int16", self.int16), ("Int8", self.int8),
                ("StorageBuffer16BitAccess", self.storage16),
                ("StorageBuffer8BitAccess", self.storage8)]
        exts = [("SPV_KHR_16bit_storage", self.storage16), ("SPV_KHR_8bit_storage", self.storage8)]
        return ",".join(["spirv:v1.3", "cap:Shader"]
                        + [f"cap:{c}" for c, ok in caps if ok]
                        + [f"ext:{e}" for e, ok in exts if ok]
                        + ["ext:SPV_KHR_storage_buffer_storage_class"])


def _query(vk, device) -> VulkanFeatures:
    props = ctypes.create_string_buffer(4096)       # VkPhysicalDeviceProperties is ~830 bytes
    vk.vkGetPhysicalDeviceProperties(device, props)
    api = _u32.from_buffer(props, 0).value
    name = props.raw[20:276].split(b"\0", 1)[0].decode(errors="replace")
    f2 = _Features2(sType=_FEATURES_2)
    s8, s16, fi = _Storage8(sType=_8BIT_STORAGE), _Storage16(sType=_16BIT_STORAGE), \
        _Float16Int8(sType=_FLOAT16_INT8)
    # The 8-bit and float16/int8 structures are core in Vulkan 1.2 only; an older device
    # would not know them, so they are chained only where it does.
    chain = [s16] + ([fi, s8] if ((api >> 12) & 0x3FF) >= 2 or (api >> 22) > 1 else [])
    f2.pNext = ctypes.cast(ctypes.pointer(chain[0]), ctypes.c_void_p)
    for a, b in zip(chain, chain[1:]):
        a.pNext = ctypes.cast(ctypes.pointer(b), ctypes.c_void_p)
    vk.vkGetPhysicalDeviceFeatures2(device, ctypes.byref(f2))
    core = f2.features
    return VulkanFeatures(name=name, float16=bool(fi.shaderFloat16),
                          float64=bool(core[_SHADER_FLOAT64]), int8=bool(fi.shaderInt8),
                          int16=bool(core[_SHADER_INT16]), int64=bool(core[_SHADER_INT64]),
                          storage8=bool(s8.storageBuffer), storage16=bool(s16.storageBuffer))


@functools.cache
def device_features() -> tuple[VulkanFeatures, ...]:
    """The features of each Vulkan physical device, in the loader's order (IREE's too);
    () when there is no loader or no device."""
    try:
        vk = ctypes.CDLL("libvulkan.so.1")
    except OSError:
        return ()
    vk.vkCreateInstance.restype = ctypes.c_int32
    vk.vkEnumeratePhysicalDevices.restype = ctypes.c_int32
    for fn in ("vkGetPhysicalDeviceProperties", "vkGetPhysicalDeviceFeatures2"):
        getattr(vk, fn).argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    vk.vkDestroyInstance.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    app = _AppInfo(sType=0, pApplicationName=b"ember", pEngineName=b"ember", apiVersion=_API_1_1)
    info = _InstanceInfo(sType=_INSTANCE_CREATE_INFO, pApplicationInfo=ctypes.pointer(app))
    instance = ctypes.c_void_p()
    if vk.vkCreateInstance(ctypes.byref(info), None, ctypes.byref(instance)) != 0:
        return ()
    try:
        count = _u32(0)
        vk.vkEnumeratePhysicalDevices(instance, ctypes.byref(count), None)
        devices = (ctypes.c_void_p * count.value)()
        if count.value == 0 or vk.vkEnumeratePhysicalDevices(
                instance, ctypes.byref(count), devices) != 0:
            return ()
        return tuple(_query(vk, d) for d in devices[:count.value])
    finally:
        vk.vkDestroyInstance(instance, None)

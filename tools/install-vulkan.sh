#!/usr/bin/env bash
# Best effort: install Mesa's lavapipe (Vulkan on the CPU) so the test suite also runs on
# Vulkan. Quiet, and never fails: without root or apt-get the Vulkan tests are skipped, each
# with the reason.
{
    if dpkg -s libvulkan1 mesa-vulkan-drivers >/dev/null 2>&1; then
        exit 0
    fi
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "tools/install-vulkan.sh: not root or no apt-get; Vulkan tests will be skipped" >&2
        exit 0
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq libvulkan1 mesa-vulkan-drivers >/dev/null 2>&1 ||
        { apt-get update -qq >/dev/null 2>&1 &&
          apt-get install -y -qq libvulkan1 mesa-vulkan-drivers >/dev/null 2>&1; } ||
        echo "tools/install-vulkan.sh: could not install lavapipe; Vulkan tests will be" \
             "skipped" >&2
} || true
exit 0

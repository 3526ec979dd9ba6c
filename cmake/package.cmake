# SPDX-License-Identifier: Apache-2.0
# package.cmake — `cpack -G DEB` from a build configured with
# -DCMAKE_INSTALL_PREFIX=/usr (scripts/package-deb.sh does it all): a Debian package
# whose dependencies dpkg-shlibdeps reads off the linked Debian runtime libraries, plus
# the ones loaded at run time (the Vulkan loader) and, recommended, what the Python
# client and CPU Vulkan need. docs/deploy.md "Install".
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME stagd)
set(CPACK_PACKAGE_VENDOR "the stagd authors")
set(CPACK_PACKAGE_CONTACT "the stagd authors <stagd@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "converts Python into staged programs and runs them on GPUs")
set(CPACK_PACKAGE_DESCRIPTION
    "A daemon that turns idiomatic Python into staged programs (AutoGraph and Snek\ntransformations), stages them into a typed graph IR with reverse-mode AD, and runs\nthem on any Vulkan GPU or the CPU; its gRPC and LSP API, the stagctl command line,\nthe Python client and the VS Code extension.")
set(CPACK_RESOURCE_FILE_LICENSE ${CMAKE_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libvulkan1")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "python3 (>= 3.11), python3-grpcio, python3-protobuf, python3-numpy, mesa-vulkan-drivers")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_SOURCE_DIR}/deploy/debian/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
include(CPack)

# `cpack -G DEB` in the build folder makes ioacct_VERSION_ARCH.deb from the
# install rules (cmake/install.cmake). Depends comes from dpkg-shlibdeps,
# i.e. from the libraries the binary really links, with the versions their
# packages' symbols files require; tests/cli/package_test.cpp checks that
# every library the installed binary needs is owned by a package in it.
set(CPACK_GENERATOR DEB)
# The package installs where the build was configured to (the presets: /usr),
# the folder the generated man pages point to for docs/*.md.
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_PACKAGE_NAME ioacct)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# IOACCT_PACKAGE_CONTACT: cmake/install.cmake (the changelog names it too).
set(CPACK_PACKAGE_CONTACT "${IOACCT_PACKAGE_CONTACT}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "io_uring I/O benchmark and monitor that tells the truth about where time goes")
# The summary is the Description's first line; this is the rest.
string(CONCAT CPACK_DEBIAN_PACKAGE_DESCRIPTION
  "ioacct bench runs io_uring and psync workloads on files and block devices and\n"
  "accounts for them: IOPS at completion, every latency sample, CPU per I/O with\n"
  "SQPOLL threads, and the device's exact busy time from eBPF beside %util.\n"
  "ioacct stat is iostat -x with the exact busy time, ioacct rings shows every\n"
  "io_uring on the machine, ioacct export serves it all to Prometheus, and\n"
  "ioacct compare answers A-or-B questions with interleaved repetitions.")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "prometheus, fio")
set(CPACK_STRIP_FILES ON)
include(CPack)

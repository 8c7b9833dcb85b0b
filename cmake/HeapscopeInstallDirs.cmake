# The install directories (GNUInstallDirs), decided once for the install rules and for the
# harness, which looks for the engine libraries and the `hsbench app` shim relative to its own
# installed location. On multiarch systems (Debian and derivatives) libraries go to
# lib/<triplet> under every prefix, as the dynamic linker, pkg-config and find_package all
# search there (also under /usr/local); GNUInstallDirs would do so only for /usr. An explicit
# CMAKE_INSTALL_LIBDIR wins.
if(CMAKE_LIBRARY_ARCHITECTURE AND NOT DEFINED CACHE{CMAKE_INSTALL_LIBDIR})
  set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE} CACHE PATH
      "Object code libraries (lib/<multiarch triplet>)")
endif()
include(GNUInstallDirs)

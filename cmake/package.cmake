# What `cmake --install build --prefix P` puts in P: the header, libait.so
# (with its soname link libait.so.0), libait.a, the ait command (and ait-mpi,
# which its `gemm tune --mpi` runs, when Open MPI was found), and the two
# ways programs find them: pkg-config's ait.pc and CMake's find_package(ait)
# (imported targets ait::ait, the shared library, and ait::ait_static).
include(CMakePackageConfigHelpers)
set(AIT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ait)

install(FILES include/ait.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ait_shared EXPORT aitTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${AIT_STATIC} DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS ait RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET ait-mpi) # beside ait: `ait gemm tune --mpi` runs it from ait's folder
  install(TARGETS ait-mpi RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# ait.pc locates the prefix from its own folder, so an installed tree still
# works after it is moved (and under any --prefix given at install time).
file(RELATIVE_PATH AIT_PC_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" AIT_PC_PREFIX "${AIT_PC_PREFIX}")
configure_file(cmake/ait.pc.in ait.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/ait.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(EXPORT aitTargets NAMESPACE ait:: DESTINATION ${AIT_CMAKE_DIR})
configure_package_config_file(cmake/aitConfig.cmake.in aitConfig.cmake
                              INSTALL_DESTINATION ${AIT_CMAKE_DIR})
# The soname changes with the major version only; the package promises the same.
write_basic_package_version_file(aitConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/aitConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/aitConfigVersion.cmake
        DESTINATION ${AIT_CMAKE_DIR})

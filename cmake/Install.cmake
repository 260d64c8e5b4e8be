# Installs the tools, libraries, headers and a CMake package so that C++
# users can `find_package(ComposerOpt)` and link `ComposerOpt::API`.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(COMPOSER_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/ComposerOpt)

install(TARGETS composer-opt RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ComposerDialect ComposerAnalysis ComposerPasses
                ComposerTorchScriptPlugin
                ComposerAPI
  EXPORT ComposerOptTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# Loaded at run time, never linked: the TorchScript plugin, found beside
# libComposerTorchScriptPlugin. The runtime library beside it (which the
# plugin loads to export runtime ops, --lower-to=runtime, and Python loads to
# run them) installs itself with its own package, find_package(ComposerRuntime)
# (runtime/CMakeLists.txt).
install(TARGETS ComposerTorchScript LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/composer
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/composer
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.inc")

install(EXPORT ComposerOptTargets NAMESPACE ComposerOpt::
  DESTINATION ${COMPOSER_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/ComposerOptConfig.cmake.in
  ${PROJECT_BINARY_DIR}/ComposerOptConfig.cmake
  INSTALL_DESTINATION ${COMPOSER_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/ComposerOptConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/ComposerOptConfig.cmake
              ${PROJECT_BINARY_DIR}/ComposerOptConfigVersion.cmake
  DESTINATION ${COMPOSER_CMAKE_DIR})

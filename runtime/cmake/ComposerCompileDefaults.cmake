# The C++ level, position-independent code and default build type of every
# composer target: included at top level and by the runtime's standalone
# build (runtime/CMakeLists.txt), which cannot reach the top-level cmake/.
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

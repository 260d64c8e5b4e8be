# The C++ level, position-independent code and default build type of every
# composer target: included at top level and by the runtime's standalone
# build (runtime/CMakeLists.txt), which cannot reach the top-level cmake/.
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()

# LibTorch code needs exceptions and RTTI, unlike the LLVM-style code beside
# it. Parsing LibTorch's headers is most of such a file's compile time (about
# 20 of 25 s here), so these targets compile their sources as unity batches:
# one parse serves a batch. Each file's internal names must then be unique
# within its target. COMPOSER_UNITY_BUILD=OFF compiles file by file, for
# quicker rebuilds while editing one file.
option(COMPOSER_UNITY_BUILD "Compile LibTorch targets in unity batches" ON)
set(COMPOSER_TORCH_FLAGS -fexceptions -frtti)
function(composer_torch_target name)
  target_compile_options(${name} PRIVATE ${COMPOSER_TORCH_FLAGS} ${ARGN})
  set_target_properties(${name} PROPERTIES UNITY_BUILD ${COMPOSER_UNITY_BUILD}
    UNITY_BUILD_BATCH_SIZE 8)
  if(COMPOSER_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # GCC takes a batch's included source files for headers and warns when
    # their classes hold types of an anonymous namespace; they are not
    # headers.
    target_compile_options(${name} PRIVATE -Wno-subobject-linkage)
  endif()
endfunction()

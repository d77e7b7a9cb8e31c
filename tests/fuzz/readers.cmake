# The sources of gsparse's readers, parsers and graph formats, which need neither Halide nor a GPU:
# what the fuzz targets (tests/fuzz) and the sanitizer build (tests/sanitize) compile on their own.
# Defines the static library gsparse_readers; GSPARSE_ROOT must name the repository root.
find_package(Threads REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(ZLIB)
file(GLOB GSPARSE_READER_SOURCES CONFIGURE_DEPENDS ${GSPARSE_ROOT}/src/core/*.cpp ${GSPARSE_ROOT}/src/graph/*.cpp)
list(APPEND GSPARSE_READER_SOURCES ${GSPARSE_ROOT}/schedules/schedule_params.cpp
     ${GSPARSE_ROOT}/autotune/records.cpp ${GSPARSE_ROOT}/autotune/tuning_cache.cpp)
add_library(gsparse_readers STATIC ${GSPARSE_READER_SOURCES})
target_include_directories(gsparse_readers PUBLIC ${GSPARSE_ROOT}/src ${GSPARSE_ROOT})
target_link_libraries(gsparse_readers PUBLIC nlohmann_json::nlohmann_json Threads::Threads)
if(ZLIB_FOUND)
  target_compile_definitions(gsparse_readers PRIVATE GSPARSE_HAVE_ZLIB)
  target_link_libraries(gsparse_readers PUBLIC ZLIB::ZLIB)
endif()

# The fuzz targets: fuzz_<name>.cpp next to this file, each with a seed corpus in corpus/<name>.
set(GSPARSE_FUZZ_TARGETS mtx edge_list gcsr graph_arrays schedule_params records tuning_cache)

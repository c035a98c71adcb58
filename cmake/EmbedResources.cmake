# batchfit_embed(OUT_CPP NAMESPACE_FN files...): generates a C++ file with each file's bytes as a
# std::string_view, looked up by file name through `std::string_view <fn>(std::string_view name)`.
function(batchfit_embed out_cpp fn_name)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_cpp} -DFN=${fn_name} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedScript.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/EmbedScript.cmake
    COMMENT "Embedding resources into ${out_cpp}"
    VERBATIM)
endfunction()

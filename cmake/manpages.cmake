# Man pages (ioacct(1), one per subcommand) and bash/zsh completions, made at
# build time by the binary itself from the option definitions that --help
# prints (src/cli/docgen.cpp), so none of them can drift from the code.
# Output: ${IOACCT_GENERATED_DOCS}/man1/*.1.gz, ioacct.bash, _ioacct.
include(GNUInstallDirs)
find_program(GZIP gzip REQUIRED)
set(IOACCT_GENERATED_DOCS ${CMAKE_BINARY_DIR}/generated-docs)
set(IOACCT_DOCS_STAMP ${IOACCT_GENERATED_DOCS}/stamp)
add_custom_command(
  OUTPUT ${IOACCT_DOCS_STAMP}
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${IOACCT_GENERATED_DOCS}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${IOACCT_GENERATED_DOCS}/man1
  COMMAND $<TARGET_FILE:ioacct> --generate-docs ${IOACCT_GENERATED_DOCS}/man1 ${CMAKE_INSTALL_FULL_DOCDIR}
  COMMAND ${CMAKE_COMMAND} -E rename ${IOACCT_GENERATED_DOCS}/man1/ioacct.bash ${IOACCT_GENERATED_DOCS}/ioacct.bash
  COMMAND ${CMAKE_COMMAND} -E rename ${IOACCT_GENERATED_DOCS}/man1/_ioacct ${IOACCT_GENERATED_DOCS}/_ioacct
  # Debian's way: compressed, without a time stamp in the gzip header (reproducible).
  COMMAND sh -c "${GZIP} -9nf ${IOACCT_GENERATED_DOCS}/man1/*.1"
  COMMAND ${CMAKE_COMMAND} -E touch ${IOACCT_DOCS_STAMP}
  DEPENDS ioacct
  COMMENT "Man pages and shell completions from ioacct's own option definitions"
  VERBATIM)
add_custom_target(ioacct_docs ALL DEPENDS ${IOACCT_DOCS_STAMP})

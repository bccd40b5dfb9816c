# What `cmake --install` (and so the .deb) puts in place, under
# CMAKE_INSTALL_PREFIX (DESTDIR honoured):
#   bin/ioacct
#   share/man/man1/ioacct.1.gz, ioacct-SUBCOMMAND.1.gz   (cmake/manpages.cmake)
#   share/bash-completion/completions/ioacct, share/zsh/vendor-completions/_ioacct
#   share/doc/ioacct/  README.md and docs/*.md (the man pages and --help point there),
#                      copyright and changelog.gz (Debian policy 12.5, 12.7)
#   lib/systemd/system/ioacct-export.service              (contrib/systemd)
#   share/ioacct/prometheus/, share/ioacct/grafana/       (contrib: rules, alerts, dashboard)
include(GNUInstallDirs)
# Whoever builds packages to ship sets this to their own address
# (-DIOACCT_PACKAGE_CONTACT=...); the default is a placeholder on a domain
# reserved for examples (RFC 2606), which lintian accepts as a mail host.
set(IOACCT_PACKAGE_CONTACT "ioacct maintainers <ioacct@example.org>" CACHE STRING "The .deb's Maintainer")
# --help names the installed docs when the binary runs from BINDIR
# (src/cli/docgen.cpp, installed_doc_dir).
file(RELATIVE_PATH IOACCT_DOCS_FROM_BIN ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_DOCDIR})
target_compile_definitions(ioacct_cli PRIVATE IOACCT_DOCS_FROM_BIN="${IOACCT_DOCS_FROM_BIN}")
install(TARGETS ioacct RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${IOACCT_GENERATED_DOCS}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        FILES_MATCHING PATTERN "*.1.gz")
install(FILES ${IOACCT_GENERATED_DOCS}/ioacct.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME ioacct)
install(FILES ${IOACCT_GENERATED_DOCS}/_ioacct DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/cli.md ${CMAKE_SOURCE_DIR}/docs/design.md
              ${CMAKE_SOURCE_DIR}/docs/fio.md ${CMAKE_SOURCE_DIR}/docs/json-schema.md ${CMAKE_SOURCE_DIR}/docs/metrics.md
              ${CMAKE_SOURCE_DIR}/contrib/debian/copyright
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# A native package's changelog (lintian: no-changelog is an error): one entry
# for this version. Its date honours SOURCE_DATE_EPOCH, and gzip -n leaves
# the time out of the header, so that a rebuild can be byte for byte the same.
string(TIMESTAMP IOACCT_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
configure_file(${CMAKE_SOURCE_DIR}/contrib/debian/changelog.in ${CMAKE_BINARY_DIR}/generated-docs-changelog/changelog @ONLY)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated-docs-changelog/changelog.gz
  COMMAND ${GZIP} -9nkf ${CMAKE_BINARY_DIR}/generated-docs-changelog/changelog
  DEPENDS ${CMAKE_BINARY_DIR}/generated-docs-changelog/changelog
  COMMENT "The package's changelog.gz"
  VERBATIM)
add_custom_target(ioacct_changelog ALL DEPENDS ${CMAKE_BINARY_DIR}/generated-docs-changelog/changelog.gz)
install(FILES ${CMAKE_BINARY_DIR}/generated-docs-changelog/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# systemd looks in lib/systemd/system under /usr (merged /usr) or / alike.
install(FILES ${CMAKE_SOURCE_DIR}/contrib/systemd/ioacct-export.service DESTINATION lib/systemd/system)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/prometheus/ioacct-rules.yml ${CMAKE_SOURCE_DIR}/contrib/prometheus/ioacct-rules.test.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ioacct/prometheus)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/grafana/ioacct.json DESTINATION ${CMAKE_INSTALL_DATADIR}/ioacct/grafana)

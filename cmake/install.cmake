# What `cmake --install` (and so the .deb) puts in place, under
# CMAKE_INSTALL_PREFIX (DESTDIR honoured):
#   bin/ioacct
#   share/man/man1/ioacct.1.gz, ioacct-SUBCOMMAND.1.gz   (cmake/manpages.cmake)
#   share/bash-completion/completions/ioacct, share/zsh/vendor-completions/_ioacct
#   share/doc/ioacct/  README.md and docs/*.md (the man pages point there)
#   lib/systemd/system/ioacct-export.service              (contrib/systemd)
#   share/ioacct/prometheus/, share/ioacct/grafana/       (contrib: rules, alerts, dashboard)
include(GNUInstallDirs)
install(TARGETS ioacct RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${IOACCT_GENERATED_DOCS}/man1/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        FILES_MATCHING PATTERN "*.1.gz")
install(FILES ${IOACCT_GENERATED_DOCS}/ioacct.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME ioacct)
install(FILES ${IOACCT_GENERATED_DOCS}/_ioacct DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions)
install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/docs/cli.md ${CMAKE_SOURCE_DIR}/docs/design.md
              ${CMAKE_SOURCE_DIR}/docs/json-schema.md ${CMAKE_SOURCE_DIR}/docs/metrics.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# systemd looks in lib/systemd/system under /usr (merged /usr) or / alike.
install(FILES ${CMAKE_SOURCE_DIR}/contrib/systemd/ioacct-export.service DESTINATION lib/systemd/system)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/prometheus/ioacct-rules.yml ${CMAKE_SOURCE_DIR}/contrib/prometheus/ioacct-rules.test.yml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/ioacct/prometheus)
install(FILES ${CMAKE_SOURCE_DIR}/contrib/grafana/ioacct.json DESTINATION ${CMAKE_INSTALL_DATADIR}/ioacct/grafana)

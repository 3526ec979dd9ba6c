# SPDX-License-Identifier: Apache-2.0
# install.cmake — what `cmake --install` (and so `cpack -G DEB`) puts where, under
# CMAKE_INSTALL_PREFIX (docs/deploy.md "Install"):
#   bin/stagd, bin/stagctl                      the daemon and the command line
#   lib/python3*/*-packages/stagd/              the Python client, with its generated
#                                                protobuf modules (stagd/_generated/)
#   share/man/man1/stagd.1, stagctl.1           made from the --help tables (help2man)
#   lib/systemd/system/stagd.service            the service unit (DynamicUser, hardened)
#   etc/stagd/stagd.conf                        the default configuration (/etc for /usr)
#   share/stagd/vscode/stagd.vsix               the VS Code extension, when built (vsix)
#   share/doc/stagd/                            README, LICENSE, NOTICE, copyright
include(GNUInstallDirs)

install(TARGETS stagd stagctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The Python client: the sources, then the generated message modules inside it, so the
# installed package imports them without protoc (clients/python/stagd/_proto.py). It goes
# where Debian's python3 (the one the LSP graph helper and notebooks run) imports it from,
# decided at install time (`cmake --install --prefix` may change the prefix):
#   a build configured for /usr (the .deb, the image), or --prefix /usr: lib/python3/dist-packages
#   --prefix /usr/local (the default):  lib/python3.X/dist-packages
#   any other prefix:                   lib/python3.X/site-packages (the user site for ~/.local)
# -DSTAGD_PYTHON_DIR=lib/... fixes it instead.
set(STAGD_PYTHON_DIR "" CACHE STRING
    "Where the Python package goes, relative to the prefix (empty: chosen by the prefix)")
find_program(STAGD_INSTALL_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(STAGD_INSTALL_PYTHON NAMES python3)
set(py_xy 3)
if(STAGD_INSTALL_PYTHON)
  execute_process(COMMAND ${STAGD_INSTALL_PYTHON} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE py_xy OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(py_generated "")
if(TARGET python_proto)
  set(py_generated "${CMAKE_BINARY_DIR}/python/stagd_gen/stagd_pb2.py;${CMAKE_BINARY_DIR}/python/stagd_gen/health_pb2.py")
endif()
install(CODE "
  set(py_dir \"${STAGD_PYTHON_DIR}\")
  if(NOT py_dir)
    if(\"${CMAKE_INSTALL_PREFIX}\" STREQUAL \"/usr\" OR CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(py_dir lib/python3/dist-packages)
    elseif(CMAKE_INSTALL_PREFIX STREQUAL \"/usr/local\")
      set(py_dir lib/python${py_xy}/dist-packages)
    else()
      set(py_dir lib/python${py_xy}/site-packages)
    endif()
  endif()
  file(INSTALL \"${CMAKE_SOURCE_DIR}/clients/python/stagd\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${py_dir}\"
       PATTERN __pycache__ EXCLUDE PATTERN *.pyc EXCLUDE)
  if(NOT \"${py_generated}\" STREQUAL \"\")
    file(INSTALL ${py_generated} DESTINATION \"\${CMAKE_INSTALL_PREFIX}/\${py_dir}/stagd/_generated\")
  endif()
")

# Man pages from the programs' own --help (so they never disagree with it).
find_program(HELP2MAN help2man)
if(HELP2MAN)
  set(man_dir ${CMAKE_BINARY_DIR}/man)
  foreach(prog stagd stagctl)
    if(prog STREQUAL "stagd")
      set(what "converts Python into staged programs and runs them on GPUs (daemon)")
    else()
      set(what "command line of the stagd daemon")
    endif()
    add_custom_command(
      OUTPUT ${man_dir}/${prog}.1
      COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
              ${HELP2MAN} --no-info --no-discard-stderr --section=1 --name=${what}
              --version-string=${PROJECT_VERSION} --output=${man_dir}/${prog}.1 $<TARGET_FILE:${prog}>
      DEPENDS ${prog}
      COMMENT "help2man ${prog}"
      VERBATIM)
    list(APPEND man_pages ${man_dir}/${prog}.1)
  endforeach()
  add_custom_target(man_pages ALL DEPENDS ${man_pages})
  install(FILES ${man_pages} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  message(WARNING "help2man not found: no man pages (apt-get install help2man)")
endif()

# The service unit names the installed binary and the configuration file.
set(STAGD_INSTALLED_BIN ${CMAKE_INSTALL_FULL_BINDIR}/stagd)
set(STAGD_INSTALLED_CONF ${CMAKE_INSTALL_FULL_SYSCONFDIR}/stagd/stagd.conf)
configure_file(${CMAKE_SOURCE_DIR}/deploy/systemd/stagd.service.in ${CMAKE_BINARY_DIR}/deploy/stagd.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/deploy/stagd.service DESTINATION lib/systemd/system)
# /etc/stagd for the /usr prefix (the .deb), PREFIX/etc/stagd otherwise (GNUInstallDirs).
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(conf_dir ${CMAKE_INSTALL_FULL_SYSCONFDIR}/stagd)
else()
  set(conf_dir ${CMAKE_INSTALL_SYSCONFDIR}/stagd)
endif()
install(FILES ${CMAKE_SOURCE_DIR}/deploy/stagd.conf DESTINATION ${conf_dir})

# The VS Code extension, as a file for `code --install-extension`: built by the vsix
# target (npm; tests/lsp/run.sh makes the same file), installed when it exists.
set(STAGD_VSIX ${CMAKE_SOURCE_DIR}/clients/vscode/stagd.vsix)
find_program(NPM npm)
if(NPM)
  add_custom_target(vsix
    COMMAND ${NPM} ci --no-audit --no-fund --prefer-offline --loglevel=error
    COMMAND ${NPM} run --silent package
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}/clients/vscode
    COMMENT "clients/vscode → stagd.vsix"
    VERBATIM)
endif()
install(CODE "if(EXISTS \"${STAGD_VSIX}\")
  file(INSTALL \"${STAGD_VSIX}\" DESTINATION \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/stagd/vscode\")
endif()")

install(FILES ${CMAKE_SOURCE_DIR}/README.md ${CMAKE_SOURCE_DIR}/LICENSE ${CMAKE_SOURCE_DIR}/NOTICE
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${CMAKE_SOURCE_DIR}/deploy/debian/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

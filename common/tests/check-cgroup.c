/* futuredisk — common: unit tests for reading a cgroup's CPU time
 * (cpu.stat) and for the host table (host=NAME).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "check-main.h"
#include "host.h"

START_TEST (test_cpu_stat)
{
  struct fm_err err;
  uint64_t us = 0;

  /* The kernel's layout (cgroup v2, 6.x): usage first, more after. */
  ck_assert_int_eq (fd_cpu_stat_parse ("usage_usec 10638961768\n"
                                       "user_usec 3720230368\n"
                                       "system_usec 6918731399\n"
                                       "nice_usec 239879633\n",
                                       &us, &err),
                    0);
  ck_assert_uint_eq (us, 10638961768ULL);
  /* Anywhere in the file, last line without a newline too. */
  ck_assert_int_eq (fd_cpu_stat_parse ("user_usec 1\nusage_usec 42", &us, &err),
                    0);
  ck_assert_uint_eq (us, 42);
  /* user_usec is not usage_usec. */
  ck_assert_int_eq (fd_cpu_stat_parse ("user_usec 5\n", &us, &err), -1);
  ck_assert_str_eq (err.msg, "cpu.stat: no usage_usec line");
  ck_assert_int_eq (fd_cpu_stat_parse ("", &us, &err), -1);
  ck_assert_int_eq (fd_cpu_stat_parse ("usage_usec \n", &us, &err), -1);
  ck_assert_str_eq (err.msg, "cpu.stat: malformed usage_usec line");
  ck_assert_int_eq (fd_cpu_stat_parse ("usage_usec 12x\n", &us, &err), -1);
  ck_assert_int_eq (
      fd_cpu_stat_parse ("usage_usec 99999999999999999999999\n", &us, &err),
      -1);
}
END_TEST

/* Read afresh from offset 0 each time, whatever was read before. */
START_TEST (test_cpu_stat_read)
{
  char dir[64], path[128];
  struct fm_err err;
  uint64_t us = 0;
  FILE *fp;
  int fd;

  fd_check_tmpdir ("cgroup", dir, sizeof dir);
  snprintf (path, sizeof path, "%s/cpu.stat", dir);
  ck_assert_ptr_nonnull (fp = fopen (path, "w"));
  fputs ("usage_usec 100\nuser_usec 60\n", fp);
  fclose (fp);
  ck_assert_int_ne (fd = open (path, O_RDONLY), -1);
  ck_assert_int_eq (fd_cpu_stat_read (fd, &us, &err), 0);
  ck_assert_uint_eq (us, 100);
  ck_assert_ptr_nonnull (fp = fopen (path, "w"));
  fputs ("usage_usec 250\nuser_usec 60\n", fp);
  fclose (fp);
  ck_assert_int_eq (fd_cpu_stat_read (fd, &us, &err), 0);
  ck_assert_uint_eq (us, 250);
  close (fd);
  unlink (path);
  rmdir (dir);
}
END_TEST

START_TEST (test_hosts)
{
  const struct fd_host *h;
  struct fm_err err;
  size_t i;

  ck_assert_ptr_nonnull (h = fd_host_find ("host", "server-2006", &err));
  ck_assert (h->speed > 0 && h->speed < 1);
  ck_assert_uint_eq (h->ram_bytes, 8ull << 30);
  ck_assert_ptr_nonnull (h = fd_host_find ("host", FD_HOST_DEFAULT, &err));
  ck_assert (h->speed == 1 && h->ram_bytes == 0);
  /* An unknown name: the key, the name and every known host. */
  ck_assert_ptr_null (fd_host_find ("--host", "cray-1", &err));
  ck_assert_str_eq (err.msg, "--host: unknown host 'cray-1' (known: native, "
                             "server-2024, server-2006, nas-2010)");
  /* Every entry is usable and says where its figures come from. */
  for (i = 0; (h = fd_host_at (i)) != NULL; i++) {
    ck_assert (h->speed > 0 && h->speed <= 4);
    ck_assert (strlen (h->source) > 10);
    ck_assert_ptr_eq (fd_host_find ("host", h->name, &err), h);
  }
  ck_assert_uint_eq (i, 4);
}
END_TEST

int
main (void)
{
  const struct fd_check_case cases[] = {
      {"cpu_stat", test_cpu_stat},
      {"cpu_stat_read", test_cpu_stat_read},
      {"hosts", test_hosts},
  };

  return fd_check_main ("cgroup", cases, sizeof cases / sizeof cases[0]);
}

/** The `name=value` of a Set-Cookie header for `name`, or undefined. */
export function cookieOf(setCookie: string | string[] | undefined, name: string): string | undefined {
  const all = Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : [];
  const found = all.find((cookie) => cookie.startsWith(`${name}=`));
  return found?.split(';')[0];
}

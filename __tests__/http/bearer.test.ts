/** readBearerToken: the one reader of `Authorization: Bearer`, for the access guard and createKubeAuth. */
import { MAX_AUTHORIZATION_LENGTH, readBearerToken } from '../../lib/http/bearer';

describe('readBearerToken', () => {
  it.each([
    [undefined, { refused: 'no bearer token' }],
    ['', { refused: 'no bearer token' }],
    ['Bearer', { refused: 'no bearer token' }],
    ['bearer   ', { refused: 'no bearer token' }],
    ['Basic dXNlcjpwYXNz', { refused: 'malformed bearer token' }],
    ['Bearer a b', { refused: 'malformed bearer token' }],
    ['Bearer  abc', { refused: 'malformed bearer token' }],
    ['Bearer abc\t', { refused: 'malformed bearer token' }],
    ['Bearer tökén', { refused: 'malformed bearer token' }],
    ['Bearer abc', { token: 'abc' }],
    ['bEARER x.y-z_~+/=', { token: 'x.y-z_~+/=' }],
  ])('reads %p', (header, reading) => {
    expect(readBearerToken(header)).toEqual(reading);
  });

  it('refuses a header over the bound before matching it, and reads one at the bound', () => {
    const token = 'a'.repeat(MAX_AUTHORIZATION_LENGTH - 'Bearer '.length);
    expect(readBearerToken(`Bearer ${token}`)).toEqual({ token });
    expect(readBearerToken(`Bearer ${token}a`)).toEqual({ refused: 'malformed bearer token' });
  });
});

/** Placeholder: being written. */
export function Search() {
  return <p>Search</p>;
}

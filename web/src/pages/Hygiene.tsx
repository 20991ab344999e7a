/** Placeholder: being written. */
export function Hygiene() {
  return <p>Hygiene</p>;
}

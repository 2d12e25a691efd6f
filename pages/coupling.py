import streamlit as st

st.title("coupling")
st.write("Being built.")
